"""Each package's public names, pinned; and no module reaches into another package's insides.

As trio's ``_tests/test_exports.py``: what a package offers is listed here by hand, so a change to
it is a deliberate edit of this file. Pinned are every package's ``__init__`` (its ``__all__``, or
else the public names it defines), every library module with an ``__all__`` outside a sealed
package, and the modules of ``protocol`` (the contract bots are written against); ``MODULES``
pins each package's public modules. ``python -m tests.test_exports`` prints the surface as the
code has it now; ``python -m tests.test_exports --write`` puts it in this file (then run
``ruff format`` on it and read the diff: every line that moves is a change of public API).
Every module of ``tournaments`` declares an ``__all__`` (so all of them are pinned but the private
modules of ``tournaments.arena.web``), each name in it exists, and a public name another module
imports from a ``tournaments`` module is in that module's ``__all__``.

Two rules hold for every module of the project, tests and benchmarks included:

* a private name (``_x``: a module, or anything in a module) is used only inside its own package:
  ``referee.replay._walk`` may import ``referee.replay._records``, ``tournaments.league`` may not;
* a sealed package, whose ``__init__`` is its whole surface, is imported only through that
  ``__init__`` from outside: ``from referee.rules import Card``, never ``referee.rules.cards``.

A test may reach into the packages it tests where it must; ``TESTED`` says which, per test module.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ("referee", "protocol", "tournaments", "sample_bots")
PROJECT = (*LIBRARY, "benchmarks", "tests")
SEALED = ("referee.rules", "referee.replay", "referee.sandbox")
"""Packages whose ``__init__`` re-exports all they offer: nothing outside imports their modules."""
SKIPPED_DIRS = {"node_modules", "__pycache__"}
GENERATED = re.compile(r"_pb2(_grpc)?$")
DOTTED = re.compile(r"(?:referee|protocol|tournaments|sample_bots|benchmarks|tests)(?:\.\w+)+")

EXPORTS: dict[str, tuple[str, ...]] = {
    "protocol": (),
    "protocol.bounded": (
        "DECODER",
        "MAX_DEPTH",
        "MAX_DIGITS",
        "JsonObject",
        "JsonValue",
        "TooComplex",
        "check_json_depth",
        "loads_json",
        "loads_toml",
    ),
    "protocol.codegen": (
        "GENERATED",
        "PROTO",
        "generate",
        "main",
    ),
    "protocol.convert": (
        "DECISION_KINDS",
        "HAND_ENDS",
        "PROTOCOL_VERSION",
        "RequestDecoder",
        "action_from_pb",
        "action_to_pb",
        "card_from_pb",
        "card_to_pb",
        "cards_from_pb",
        "cards_to_pb",
        "hand_ended_from_pb",
        "hand_ended_to_pb",
        "observation_from_pb",
        "observation_to_pb",
        "params_from_pb",
        "params_to_pb",
        "public_event_from_pb",
        "public_event_to_pb",
        "score_from_pb",
        "score_to_pb",
    ),
    "protocol.manifest": (
        "ALWAYS_IGNORED",
        "CODE_MOUNT",
        "IGNORE_FILE",
        "KNOWN_KEYS",
        "MANIFEST",
        "MAX_FILES",
        "MAX_FOLDER_BYTES",
        "MAX_IGNORE_BYTES",
        "MAX_IGNORE_GLOBS",
        "MAX_IGNORE_LINES",
        "MAX_MANIFEST_BYTES",
        "MIB",
        "NAME_PATTERN",
        "OUTSIDE_RULE",
        "PYTHON_NAMES",
        "SANDBOX_PATH",
        "SYSTEM_PATHS",
        "VERSION_PATTERN",
        "FolderEntry",
        "IgnoreRule",
        "Manifest",
        "ManifestError",
        "folder_entries",
        "ignore_rule",
        "load_manifest",
    ),
    "protocol.sdk": (
        "MANIFEST_FILE",
        "MAX_MESSAGE_BYTES",
        "REFEREE_ENV",
        "TOKEN_ENV",
        "Bot",
        "HandSummary",
        "SdkError",
        "SeriesInfo",
        "SeriesSummary",
        "Session",
        "manifest_identity",
    ),
    "protocol.template": (
        "BOT",
        "MANIFEST",
        "TEST",
        "class_name",
        "create_bot_folder",
    ),
    "protocol.wire": (
        "RequestEncoder",
        "legal_actions_bytes",
    ),
    "referee": (),
    "referee.records": (
        "BODY_READERS",
        "SALT_BYTES",
        "ActionRecord",
        "BodyRecord",
        "Cpus",
        "FaultRecord",
        "FieldError",
        "Fields",
        "HandEndRecord",
        "HandStart",
        "Header",
        "LogRecord",
        "Request",
        "ResultRecord",
        "SeatIdentity",
        "Totals",
        "action_from_dict",
        "action_template",
        "action_to_dict",
        "encode",
        "record_type",
        "request_template",
    ),
    "referee.replay": (
        "RUNS_DIR",
        "VIEWERS",
        "ActionRecord",
        "BadRecord",
        "BodyRecord",
        "FaultRecord",
        "HandEndRecord",
        "HandStart",
        "Header",
        "LogNotFound",
        "LogReadError",
        "MatchLogData",
        "Replay",
        "Request",
        "ResultRecord",
        "SeatHand",
        "SeatIdentity",
        "Showdown",
        "Step",
        "StepKind",
        "Table",
        "VerifyReport",
        "VerifyStatus",
        "Viewer",
        "build_replay",
        "find_log",
        "known_formats",
        "load_replay",
        "read_log",
        "read_records",
        "read_text",
        "verify_log",
        "verify_records",
        "viewer_index",
        "viewer_name",
    ),
    "referee.rules": (
        "CARDS",
        "CARD_NAMES",
        "CARD_VALUES",
        "DISCARDS",
        "DRAW_DISCARD",
        "DRAW_STOCK",
        "KNOCKS",
        "PASS_UPCARD",
        "TAKE_UPCARD",
        "Action",
        "Arrangement",
        "Card",
        "CardSet",
        "Dealing",
        "DefenderLayout",
        "Discard",
        "DrawDiscard",
        "DrawStock",
        "Event",
        "GreedyPolicy",
        "HandEnd",
        "HandOutcome",
        "HandRecord",
        "HandState",
        "HollywoodScore",
        "IllegalActionError",
        "Knock",
        "Layoff",
        "Meld",
        "MeldKind",
        "Observation",
        "PassUpcard",
        "Phase",
        "Policy",
        "PublicEvent",
        "RandomPolicy",
        "RuleParams",
        "Scoring",
        "SeriesEnd",
        "SeriesResult",
        "SeriesState",
        "TakeUpcard",
        "arrangement_of",
        "best_discards",
        "best_throw",
        "card_set",
        "deadwood_of_mask",
        "deadwood_value",
        "dealt_deck",
        "deck_commitment",
        "enter_hand",
        "first_dealer",
        "format_cards",
        "greedy_policy",
        "knock_layout",
        "lay_off",
        "legal_actions",
        "min_deadwood",
        "next_dealer",
        "observation",
        "optimal_meld_groups",
        "parse_cards",
        "patient_policy",
        "play_hand",
        "play_series",
        "public_view",
        "score_hand",
        "series_end",
        "shuffled_deck",
    ),
    "referee.sandbox": (
        "REQUIRED_LAYERS",
        "BotJail",
        "CpuPlacement",
        "Layer",
        "LayerStatus",
        "Sandbox",
        "SandboxLimits",
        "SandboxUnavailable",
        "SweepReport",
        "TeardownReport",
        "current_placement",
        "default_jail_root",
        "describe_layers",
        "detect_layers",
        "harden_referee_process",
        "hardening_state",
        "hold_owner_lock",
        "on_spawner_thread",
        "pin_cpus",
        "private_dir",
        "remove_tree",
        "safe_name",
        "sweep_jails",
    ),
    "sample_bots": (),
    "sample_bots.greedy": (),
    "sample_bots.house": (),
    "sample_bots.house.strategy": (
        "CONFIDENCE",
        "DEFAULT_SECONDS",
        "SCREEN",
        "Budget",
        "HousePolicy",
        "Search",
        "shortlist",
    ),
    "sample_bots.house.table": (
        "Table",
        "imagine",
    ),
    "sample_bots.random": (),
    "sample_bots.strong": (),
    "tournaments": (),
    "tournaments.arena": (),
    "tournaments.arena.accounts": (
        "AccountError",
        "add_author",
        "author_of",
        "issue_token",
        "new_token",
        "revoke",
        "token_digest",
    ),
    "tournaments.arena.board": (
        "Board",
        "BoardProcess",
        "BoardRow",
        "board_json",
        "compute_board",
        "new_points",
        "standings_documents",
    ),
    "tournaments.arena.bundle": (
        "bundle_path",
        "write_bundle",
    ),
    "tournaments.arena.child": (
        "Child",
        "serve",
    ),
    "tournaments.arena.client": (
        "TOKEN_ENV",
        "ArenaClientError",
        "ArenaVerdict",
        "find_token",
        "submit_to_arena",
    ),
    "tournaments.arena.event": (
        "EVENT_FORMATS",
        "EVENT_POLL_S",
        "EventOptions",
        "EventRefused",
        "EventRunner",
        "LentExecutor",
        "SnapshotBot",
        "WithdrawnSeat",
        "cancel_event",
        "create_event",
        "event_field",
        "event_over",
        "freeze",
        "open_event",
        "parse_deadline",
        "run_events",
        "snapshot_of",
        "upload_note",
        "withdrawn",
    ),
    "tournaments.arena.intake": (
        "MAX_UPLOAD_BYTES",
        "Intake",
        "UnsafeUpload",
        "UploadRefused",
        "unpack_upload",
    ),
    "tournaments.arena.ladder": (
        "EXPLORE_SHARE",
        "FIRST_PAIRS",
        "LADDER",
        "SUSPEND_AFTER",
        "UNKNOWN_WIDTH",
        "Known",
        "Ladder",
        "choose_pairing",
        "ladder_config",
        "pairing_key",
    ),
    "tournaments.arena.privacy": (
        "redact_text",
        "redacted_log",
        "redacted_replay",
    ),
    "tournaments.arena.replays": (
        "VIEWS",
        "ReplayProcess",
        "replay_views",
    ),
    "tournaments.arena.server": (
        "GRACE_S",
        "serve",
        "server_config",
    ),
    "tournaments.arena.service": (
        "MAX_LISTENERS",
        "REFRESH_SHARE",
        "ArenaRefusal",
        "ArenaService",
        "Event",
        "LiveMatch",
        "Publisher",
    ),
    "tournaments.arena.store": (
        "ARENA_TABLES",
        "ArenaStore",
        "Entrant",
        "EntrantState",
        "EventPhase",
        "EventRow",
        "RatingPoint",
        "Submission",
        "SubmissionState",
    ),
    "tournaments.arena.web": (
        "API_PER_MINUTE",
        "CSP",
        "FAILED_LOGINS_PER_MINUTE",
        "FORM_BYTES",
        "LOGINS_PER_MINUTE",
        "MATCH_PAGES",
        "MEMORY_BYTES",
        "PING_S",
        "PUBLIC",
        "RECENT_MATCHES",
        "REPLAYS",
        "REPLAY_CACHE",
        "REPLAY_CSP",
        "ROUTES",
        "SESSION_COOKIE",
        "SESSION_S",
        "STDERR_SHOWN",
        "STREAMS_PER_CLIENT",
        "TEMPORARY_S",
        "UPLOADS_PER_MINUTE",
        "VISITOR_STREAMS",
        "Front",
        "Page",
        "Published",
        "Tree",
        "create_app",
        "serve_door",
        "stamped_files",
        "tree_stamp",
    ),
    "tournaments.audit": (
        "AuditReport",
        "audit",
        "unrecorded",
    ),
    "tournaments.cli": (),
    "tournaments.cli.app": (
        "app",
        "arena",
        "arena_event",
        "bot",
        "league",
        "play",
        "sandbox",
    ),
    "tournaments.cli.arena": (
        "announce_pairs",
        "pair_line",
    ),
    "tournaments.cli.arena_event": (),
    "tournaments.cli.bot": (),
    "tournaments.cli.common": (
        "AsJson",
        "MoveTime",
        "MoveTimeOrDefault",
        "PinCpus",
        "Strict",
        "app",
        "arena_app",
        "author_app",
        "bot_app",
        "choice",
        "console",
        "errors",
        "event_app",
        "fail",
        "league_app",
        "move_time_control",
        "open_arena",
        "open_sandbox",
        "place_cpus",
        "print_table",
        "said",
        "sandbox_app",
        "seconds",
    ),
    "tournaments.cli.demo": (
        "SAMPLES",
        "DemoHomeError",
        "demo_bots",
        "demo_note",
        "prepare_demo",
    ),
    "tournaments.cli.entry": ("main",),
    "tournaments.cli.event_view": (
        "bracket_grid",
        "event_grid",
        "round_lines",
        "rounds_grid",
    ),
    "tournaments.cli.league": (
        "ExecutorKind",
        "check_scheduler",
    ),
    "tournaments.cli.league_new": (
        "BotArguments",
        "league_new",
    ),
    "tournaments.cli.live": (
        "LeagueView",
        "MatchView",
        "PlainProgress",
    ),
    "tournaments.cli.match": (
        "MatchTestView",
        "match",
        "summary_line",
    ),
    "tournaments.cli.play": (),
    "tournaments.cli.render": (
        "END_WORDS",
        "GLOSSARY",
        "Grid",
        "bot_text",
        "bots_table",
        "cards_text",
        "crosstable_grid",
        "fault_text",
        "fit",
        "hand_row",
        "hands_table",
        "html_page",
        "markdown",
        "pairwise_grid",
        "plain_table",
        "print_checklist",
        "print_stderr",
        "rating_cells",
        "result_line",
        "rich_table",
        "score_sheet",
        "showdown_text",
        "standings_grid",
    ),
    "tournaments.cli.replay": ("replay",),
    "tournaments.cli.replay_view": (
        "SPEEDS",
        "Player",
        "ScriptedKeys",
        "TerminalKeys",
        "decode_keys",
        "play",
        "print_transcript",
        "step_view",
    ),
    "tournaments.cli.sandbox": (),
    "tournaments.events": (
        "PAIRING_METHOD",
        "PAIRING_METHODS",
        "SwissLine",
        "Tie",
        "TieResult",
        "bracket_order",
        "knockout_round",
        "knockout_rounds",
        "swiss_round",
        "swiss_table",
    ),
    "tournaments.events.knockout": (
        "bracket_order",
        "knockout_round",
        "knockout_rounds",
    ),
    "tournaments.events.swiss": (
        "FALLBACK_BUDGET",
        "LOOKAHEAD_BUDGET",
        "LOOKAHEAD_TOTAL",
        "PAIRING_METHOD",
        "PAIRING_METHODS",
        "SEARCH_BUDGET",
        "SwissLine",
        "swiss_round",
        "swiss_table",
    ),
    "tournaments.events.ties": (
        "Tie",
        "TieResult",
    ),
    "tournaments.executors": (
        "Executor",
        "ExecutorError",
        "sweep_here",
    ),
    "tournaments.executors.cluster": (
        "ClusterError",
        "DaskExecutor",
        "MatchTimings",
        "ProbeReport",
        "WorkerProbe",
    ),
    "tournaments.executors.cluster_task": (
        "CONNECT_TIMEOUT_S",
        "STOP_GRACE_S",
        "STOP_POLL_S",
        "ClusterError",
        "SweepOnStart",
        "TaskReply",
        "arena_code",
        "end_groups",
        "match_slug",
        "play_on_worker",
        "retire_idle",
        "started_processes",
        "swept",
        "worker_probe",
    ),
    "tournaments.executors.fake": (
        "Attempt",
        "FakeExecutor",
        "played",
    ),
    "tournaments.executors.local": (
        "LocalExecutor",
        "WarmWorker",
    ),
    "tournaments.executors.local_cluster": (
        "local_cluster",
        "loopback_up",
    ),
    "tournaments.executors.packing": (
        "BotCodeMismatchError",
        "Bundle",
        "bundle_bot",
        "pack_bot",
        "unpack_bot",
    ),
    "tournaments.executors.worker": (
        "Worker",
        "WorkerLine",
        "reason",
    ),
    "tournaments.formats": (),
    "tournaments.formats.bulk": ("collector_paused",),
    "tournaments.formats.hands": (
        "HandStats",
        "hand_stats",
        "logged_hands",
        "read_hand_stats",
    ),
    "tournaments.formats.records": (
        "MatchJob",
        "MatchOutcome",
        "MatchSummary",
        "WorkerFailure",
    ),
    "tournaments.formats.seeds": (
        "bot_seeds",
        "league_bot_seeds",
        "play_bot_seeds",
    ),
    "tournaments.headtohead": (
        "MatchReport",
        "batch_pairs",
        "match_config",
        "match_name",
        "match_report",
        "play_match",
        "start_match",
    ),
    "tournaments.league": (
        "EVENT_MIN_BOTS",
        "MAX_LEAGUE_MATCHES",
        "NAME_PATTERN",
        "LeagueConfig",
        "LeagueError",
        "StoredLeague",
        "create_league",
        "derive_seed",
        "extend_league",
        "league_secret",
        "load_league",
        "match_id",
        "pairings",
        "play_match_id",
        "play_seed",
        "public_seed",
        "schedule",
        "series_of",
        "stored_league",
    ),
    "tournaments.registry": (
        "Arena",
        "Checker",
        "RegistryError",
        "parse_spec",
        "resolve",
        "submit",
    ),
    "tournaments.restat": (
        "RestatReport",
        "restat",
    ),
    "tournaments.rounds": (
        "STAGES",
        "EventLine",
        "EventState",
        "StoredRound",
        "TiePlan",
        "advance",
        "check_rounds",
        "event_standings",
        "event_state",
        "seeding",
        "tie_plan",
        "tie_result",
    ),
    "tournaments.runner": (
        "AHEAD_PER_SLOT",
        "RETRIES",
        "SITTING_MAX",
        "STOPPING_SITTING_MAX",
        "LeagueBusy",
        "LeagueRunner",
        "Listener",
        "PairTally",
        "Progress",
        "blocks",
        "duplicate_pair",
        "pairs_in_order",
        "runner_of",
        "sittings_of",
    ),
    "tournaments.stats": (),
    "tournaments.stats.inference": (
        "ELO_PER_NAT",
        "LEVEL",
        "MIN_UNITS",
        "PRIOR_VARIANCE",
        "Bound",
        "MeanEstimate",
        "ScoreEstimate",
        "critical_t",
        "critical_z",
        "elo_from_score",
        "mean_estimate",
        "normalized_elo",
        "reading",
        "score_estimate",
        "score_from_elo",
        "t_cdf",
        "t_quantile",
    ),
    "tournaments.stats.margin_sprt": (
        "EFFECT_LIMIT",
        "HYPOTHESIS_LIMIT",
        "MARGIN",
        "MEASURED_SKEW",
        "PENTANOMIAL",
        "STATISTICS",
        "MarginRun",
        "MarginSettings",
        "TestSettings",
        "margin_llr",
        "margin_skewness",
        "margin_status",
        "sequential_status",
        "settings_from_dict",
        "statistic_of",
    ),
    "tournaments.stats.pairs": (
        "PairOutcome",
        "Pentanomial",
        "by_pairing",
        "pair_outcomes",
        "pentanomial",
        "units_of",
    ),
    "tournaments.stats.ratings": (
        "DENSE_FIT_MAX_BOTS",
        "DISPERSION_MIN_WEIGHT",
        "ELO",
        "PRIOR_DISPERSION_DF",
        "PRIOR_GAMES",
        "PRIOR_ROUNDS",
        "Covariance",
        "CovarianceRow",
        "Matrix",
        "Ratings",
        "Unit",
        "centred",
        "dense_fit",
        "information",
        "invert",
        "one_way_pairings",
        "pairing_totals",
        "prior_weight",
        "scoring_components",
        "settle_prior",
        "solve",
        "unit_dispersion",
    ),
    "tournaments.stats.sparse": (
        "ProbedCovariance",
        "dot",
        "sparse_fit",
    ),
    "tournaments.stats.sprt": (
        "ELO_LIMIT",
        "EMPTY_CELL",
        "PAIR_SCORES",
        "SprtRun",
        "SprtSettings",
        "SprtStatus",
        "Verdict",
        "check_hypotheses",
        "elo_score",
        "finite",
        "fit_mean",
        "llr",
        "llr_normal",
        "settings_fields",
        "status",
        "wald_bounds",
    ),
    "tournaments.stats.standings": (
        "DENSE_FIT_MAX_BOTS",
        "BotStanding",
        "Pairwise",
        "Ratings",
        "ResultReader",
        "Standings",
        "compute",
        "fit_ratings",
        "read_standings",
    ),
    "tournaments.stats.stopping": (
        "StoppedEstimate",
        "corrected_estimates",
        "pass_by",
        "stopped_quantile",
    ),
    "tournaments.store": (
        "BOTS_DIR",
        "LOGS_DIR",
        "SCHEMA_VERSION",
        "BotRow",
        "LoggedResult",
        "MatchRow",
        "MatchState",
        "ResultRow",
        "Store",
        "StoreDamaged",
        "StoreUnusable",
    ),
    "tournaments.store.bots": (
        "BOT_TABLES",
        "BotTables",
    ),
    "tournaments.store.database": (
        "BOTS_DIR",
        "LOGS_DIR",
        "META_TABLES",
        "SCHEMA_VERSION",
        "Database",
        "StoreUnusable",
        "decode_text",
    ),
    "tournaments.store.leagues": (
        "LEAGUE_TABLES",
        "LeagueTables",
    ),
    "tournaments.store.results": (
        "RESULT_TABLES",
        "ResultTables",
    ),
    "tournaments.store.rows": (
        "BotRow",
        "LoggedResult",
        "MatchRow",
        "MatchState",
        "ResultRow",
        "StoreDamaged",
    ),
    "tournaments.views": (),
    "tournaments.views.replay_html": (
        "replay_html",
        "table_patch",
    ),
    "tournaments.views.words": (
        "END_WORDS",
        "counts_text",
        "drawn_text",
        "elo_text",
        "scores_text",
        "series_lines",
        "series_verdict",
        "step_text",
        "verdict_text",
    ),
    "tournaments.workbench": (),
    "tournaments.workbench.env": (
        "ACTIONS",
        "ACTION_COUNT",
        "AGENTS",
        "DISCARD_BASE",
        "FIELDS",
        "KNOCK_BASE",
        "LAYOUT",
        "OBSERVATION_SIZE",
        "PHASES",
        "REWARDS",
        "Encoder",
        "GinEnv",
        "Reward",
        "SoloGinEnv",
        "action_mask",
        "action_number",
        "describe",
        "encode",
        "env",
        "observation_bounds",
        "observation_space",
        "raw_env",
        "total_bound",
    ),
    "tournaments.workbench.logs": (
        "Decided",
        "NotAsRecordedError",
        "RecordedSeries",
        "play_recorded",
        "write_log",
    ),
    "tournaments.workbench.policy": (
        "SANDBOX_PACKAGES",
        "PolicyError",
        "PolicyFolder",
        "PolicyKind",
        "PolicySource",
        "find_policy",
        "policy_bot_folder",
    ),
}
"""Public names by package or module (see the module docstring for which are pinned)."""

MODULES: dict[str, tuple[str, ...]] = {
    "protocol": (
        "bounded",
        "codegen",
        "convert",
        "hollywood_gin_pb2",
        "hollywood_gin_pb2_grpc",
        "manifest",
        "sdk",
        "template",
        "wire",
    ),
    "referee": (
        "bookkeeping",
        "bot_text",
        "bridge",
        "conformance",
        "control",
        "faults",
        "http2",
        "local",
        "match",
        "matchlog",
        "records",
        "remote",
        "replay",
        "rules",
        "sandbox",
        "seats",
    ),
    "sample_bots": (
        "greedy",
        "house",
        "random",
        "strong",
    ),
    "sample_bots.greedy": ("bot",),
    "sample_bots.house": (
        "bot",
        "strategy",
        "table",
    ),
    "sample_bots.random": ("bot",),
    "sample_bots.strong": (
        "bot",
        "strategy",
    ),
    "tournaments": (
        "arena",
        "audit",
        "cli",
        "events",
        "executors",
        "formats",
        "headtohead",
        "league",
        "registry",
        "restat",
        "rounds",
        "runner",
        "stats",
        "store",
        "views",
        "workbench",
    ),
    "tournaments.arena": (
        "accounts",
        "board",
        "bundle",
        "child",
        "client",
        "event",
        "intake",
        "ladder",
        "privacy",
        "replays",
        "server",
        "service",
        "store",
        "web",
    ),
    "tournaments.arena.web": (),
    "tournaments.cli": (
        "app",
        "arena",
        "arena_event",
        "bot",
        "common",
        "demo",
        "entry",
        "event_view",
        "league",
        "league_new",
        "live",
        "match",
        "play",
        "render",
        "replay",
        "replay_view",
        "sandbox",
    ),
    "tournaments.events": (
        "knockout",
        "swiss",
        "ties",
    ),
    "tournaments.executors": (
        "cluster",
        "cluster_task",
        "fake",
        "local",
        "local_cluster",
        "packing",
        "worker",
    ),
    "tournaments.formats": (
        "bulk",
        "hands",
        "records",
        "seeds",
    ),
    "tournaments.stats": (
        "inference",
        "margin_sprt",
        "pairs",
        "ratings",
        "sparse",
        "sprt",
        "standings",
        "stopping",
    ),
    "tournaments.store": (
        "bots",
        "database",
        "leagues",
        "results",
        "rows",
    ),
    "tournaments.views": (
        "replay_html",
        "words",
    ),
    "tournaments.workbench": (
        "env",
        "logs",
        "policy",
    ),
}
"""Public modules and subpackages of each package that is not sealed."""

TESTED: dict[str, tuple[str, ...]] = {
    "tests.brute": ("referee.rules",),
    "tests.cluster_scenario": ("referee.sandbox",),  # not its package: the process table, borrowed
    "tests.test_arena_published": ("tournaments.arena.web",),  # the front, on a fake tree
    "tests.test_arena_web": ("tournaments.arena.web",),  # the event stream's ping, made short
    "tests.test_bot_programs": ("referee.sandbox",),
    "tests.test_bytecode": ("referee.sandbox",),
    "tests.test_cards": ("referee.rules",),
    "tests.test_cluster": ("tournaments.executors",),
    "tests.test_cpu_cap": ("referee.sandbox",),
    "tests.test_ginignore": ("referee.sandbox",),  # the jail's copy of a folder
    "tests.test_guide": ("referee.sandbox",),  # the guide's figures against the sandbox's own
    "tests.test_last_bad_inputs": ("tournaments",),  # the audit's and restat's summary readers
    "tests.test_layoffs": ("referee.rules",),
    "tests.test_replay_stream": ("referee.replay",),  # the whole-read cap, made small
    "tests.test_melds": ("referee.rules",),
    "tests.test_placement": ("referee.sandbox",),
    "tests.test_protocol": ("protocol",),
    "tests.test_rules_tables": ("referee.rules",),
    "tests.test_sandbox": ("referee.sandbox",),
    "tests.test_sandbox_view": ("referee.sandbox",),
    "tests.test_sdk_decode": ("protocol",),  # its caches made tiny, to be cleared all the time
    "tests.test_summary_reader": ("tournaments.formats",),  # the fast summary reader
}
"""The packages each test module may reach into (private names, modules of a sealed package)."""


# --- the code as it is -------------------------------------------------------------------------


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_files(roots: tuple[str, ...]) -> Iterator[Path]:
    for root in roots:
        for path in sorted((ROOT / root).rglob("*.py")):
            if not SKIPPED_DIRS & set(path.relative_to(ROOT).parts):
                yield path


def is_package(dotted: str) -> bool:
    return (ROOT.joinpath(*dotted.split(".")) / "__init__.py").is_file()


def is_module(dotted: str) -> bool:
    return is_package(dotted) or ROOT.joinpath(*dotted.split(".")).with_suffix(".py").is_file()


def package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def declared_all(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Assign | ast.AnnAssign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets_of(node))
        for node in tree.body
    )


def targets_of(node: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def defined_names(tree: ast.Module) -> set[str]:
    """The public names a module's own top level binds (imports left out)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            names.update(t.id for t in targets_of(node) if isinstance(t, ast.Name))
    return {name for name in names if not name.startswith("_")}


def pinned_kind(module: str, path: Path, tree: ast.Module) -> bool:
    """Whether the module's names are pinned in ``EXPORTS``."""
    if any(is_private(part) for part in module.split(".")) or GENERATED.search(module):
        return False
    if path.name == "__init__.py" or module.startswith("protocol."):
        return True
    return declared_all(tree) and not any(inside(module, package) for package in SEALED)


def surface(module: str) -> set[str]:
    """What a module exports: its ``__all__``, or else the public names it defines."""
    imported = importlib.import_module(module)
    declared = getattr(imported, "__all__", None)
    if declared is not None:
        return set(declared)
    path = Path(imported.__file__ or "")
    return defined_names(ast.parse(path.read_text(), filename=str(path)))


def current_exports() -> dict[str, set[str]]:
    found = {}
    for path in source_files(LIBRARY):
        module = module_name(path)
        if pinned_kind(module, path, ast.parse(path.read_text(), filename=str(path))):
            found[module] = surface(module)
    return found


def current_modules() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in source_files(LIBRARY):
        module = module_name(path)
        if path.name == "__init__.py" and module not in SEALED:
            found[module] = set()
    for path in source_files(LIBRARY):
        module = module_name(path)
        parent, _, leaf = module.rpartition(".")
        if parent in found and not is_private(leaf):
            found[parent].add(leaf)
    return found


# --- reaching in -------------------------------------------------------------------------------


class Reach(NamedTuple):
    """A use of another package's insides."""

    where: str
    target: str
    package: str
    """The package reached into."""
    private: bool
    """A private name (else a module of a sealed package)."""

    def __str__(self) -> str:
        why = f"private to {self.package}" if self.private else f"import it from {self.package}"
        return f"{self.where}: {self.target} ({why})"


def used_paths(tree: ast.Module, package: str) -> Iterator[tuple[int, str, bool]]:
    """``(line, dotted path, whether it names a module being imported)`` for every import, every
    private attribute of an imported name, and every dotted project path passed to a call (a
    ``monkeypatch.setattr`` target)."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = absolute(node, package)
            yield node.lineno, source, True
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{source}.{alias.name}"
                yield node.lineno, f"{source}.{alias.name}", False
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name.partition(".")[0]] = (
                    alias.name if alias.asname else alias.name.partition(".")[0]
                )
                yield node.lineno, alias.name, True
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            dotted = resolved(node, bound)
            if dotted is not None:
                yield node.lineno, dotted, False
        elif isinstance(node, ast.Call):
            for argument in node.args:
                text = argument.value if isinstance(argument, ast.Constant) else None
                if isinstance(text, str) and DOTTED.fullmatch(text):
                    yield node.lineno, text, False


def absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from`` import reads, relative ones resolved against ``package``."""
    if node.level == 0:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def resolved(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The dotted path of ``a.b.c`` when ``a`` was bound by an import."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Attribute):
        base = resolved(node.value, bound)
        return None if base is None else f"{base}.{node.attr}"
    return None


def owner_of_private(dotted: str) -> str | None:
    """The package a private name belongs to (``None``: nothing private in the path)."""
    parts = dotted.split(".")
    for index, part in enumerate(parts):
        if is_private(part):
            owners = [".".join(parts[:end]) for end in range(1, index + 1)]
            return next(owner for owner in reversed(owners) if is_package(owner))
    return None


def reaches(path: Path, tested: Mapping[str, tuple[str, ...]] = TESTED) -> Iterator[Reach]:
    """Every place the module reaches into another package (but those ``tested`` allows)."""
    module = module_name(path)
    package = package_of(module, path)
    allowed = tested.get(module, ())
    where = str(path.relative_to(ROOT))
    tree = ast.parse(path.read_text(), str(path))
    for line, dotted, imports_module in used_paths(tree, package):
        if dotted.partition(".")[0] not in PROJECT:
            continue
        owner = owner_of_private(dotted)
        if owner is not None and owner != package and owner not in allowed:
            yield Reach(f"{where}:{line}", dotted, owner, private=True)
        if imports_module or is_module(dotted):
            for sealed in SEALED:
                outside = not inside(package, sealed) and sealed not in allowed
                if outside and dotted.startswith(sealed + "."):
                    yield Reach(f"{where}:{line}", dotted, sealed, private=False)


# --- the tests ---------------------------------------------------------------------------------


def pinned_order(name: str) -> tuple[int, str]:
    """Constants, then classes, then the rest (the order ruff keeps ``__all__`` in)."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def difference(expected: set[str], actual: set[str]) -> str:
    added = sorted(actual - expected, key=pinned_order)
    removed = sorted(expected - actual, key=pinned_order)
    return f"new (not pinned): {added}; pinned but gone: {removed}"


def test_every_exported_surface_is_pinned() -> None:
    exports = current_exports()
    assert sorted(exports) == sorted(EXPORTS), difference(set(EXPORTS), set(exports))


@pytest.mark.parametrize("module", sorted(EXPORTS))
def test_public_names(module: str) -> None:
    actual = surface(module)
    assert actual == set(EXPORTS[module]), f"{module}: {difference(set(EXPORTS[module]), actual)}"


@pytest.mark.parametrize("module", sorted(EXPORTS))
def test_every_listed_name_exists(module: str) -> None:
    imported = importlib.import_module(module)
    assert [name for name in EXPORTS[module] if not hasattr(imported, name)] == []


@pytest.mark.parametrize("package", SEALED)
def test_sealed_packages_list_all_they_import(package: str) -> None:
    """A name a sealed ``__init__`` imports is in its ``__all__`` (submodules aside)."""
    imported = importlib.import_module(package)
    public = {
        name
        for name, value in vars(imported).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name != "annotations"  # from __future__
    }
    assert public - set(imported.__all__) == set()


def test_public_modules() -> None:
    modules = current_modules()
    assert sorted(modules) == sorted(MODULES), difference(set(MODULES), set(modules))
    changed = [
        f"{package}: {difference(set(expected), modules[package])}"
        for package, expected in MODULES.items()
        if modules[package] != set(expected)
    ]
    assert changed == []


def test_nothing_reaches_into_another_package() -> None:
    found = [str(reach) for path in source_files(PROJECT) for reach in reaches(path)]
    assert found == []


def test_tested_lists_only_what_a_test_needs() -> None:
    """Every ``TESTED`` entry names a test module and packages it does reach into."""
    for test, packages in TESTED.items():
        path = ROOT.joinpath(*test.split(".")).with_suffix(".py")
        assert path.is_file(), f"{test} is not a module"
        needed = {reach.package for reach in reaches(path, tested={})}
        assert set(packages) <= needed, f"{test} does not reach into {set(packages) - needed}"


def declared_modules() -> list[str]:
    """Every module of ``tournaments`` that must declare an ``__all__`` (not ``__main__``, not a
    generated one)."""
    modules = (module_name(path) for path in source_files(("tournaments",)))
    return [m for m in modules if not m.endswith(".__main__") and not GENERATED.search(m)]


@pytest.mark.parametrize("module", declared_modules())
def test_every_tournaments_module_declares_all(module: str) -> None:
    imported = importlib.import_module(module)
    declared = getattr(imported, "__all__", None)
    assert declared is not None, f"{module} has no __all__"
    assert [name for name in declared if not hasattr(imported, name)] == []


def imported_names() -> Iterator[tuple[str, str, str]]:
    """``(where, module, name)`` for every public name a project module imports from a module of
    ``tournaments`` (submodules aside)."""
    for path in source_files(PROJECT):
        module = module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = absolute(node, package_of(module, path))
                if inside(source, "tournaments") and source != module:
                    for alias in node.names:
                        name = alias.name
                        if not is_private(name) and not is_module(f"{source}.{name}"):
                            yield f"{path.relative_to(ROOT)}:{node.lineno}", source, name


def test_imported_names_are_in_all() -> None:
    """What another module imports from a ``tournaments`` module is in that module's ``__all__``."""
    missing = [
        f"{where}: {name} (not in {source}.__all__)"
        for where, source, name in imported_names()
        if name not in getattr(importlib.import_module(source), "__all__", ())
    ]
    assert missing == []


# --- regeneration ------------------------------------------------------------------------------


def pinned_literal(name: str, table: dict[str, set[str]]) -> str:
    lines = [f"{name}: dict[str, tuple[str, ...]] = {{"]
    for key in sorted(table):
        names = sorted(table[key], key=pinned_order)
        if names:
            lines.append(f'    "{key}": (')
            lines.extend(f'        "{entry}",' for entry in names)
            lines.append("    ),")
        else:
            lines.append(f'    "{key}": (),')
    lines.append("}")
    return "\n".join(lines)


def rewritten(text: str, name: str, table: dict[str, set[str]]) -> str:
    """``text`` (this file) with the literal of ``name`` replaced by the code's surface now."""
    start = text.index(f"{name}: dict[str, tuple[str, ...]] = {{\n")
    end = text.index("\n}\n", start) + 2
    return text[:start] + pinned_literal(name, table) + text[end:]


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        path = Path(__file__)
        text = rewritten(path.read_text(), "EXPORTS", current_exports())
        path.write_text(rewritten(text, "MODULES", current_modules()))
    else:
        print(pinned_literal("EXPORTS", current_exports()))
        print()
        print(pinned_literal("MODULES", current_modules()))
