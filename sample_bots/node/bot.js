// node-greedy: a Hollywood Gin bot in Node.js, speaking the hollywood_gin.v1 gRPC contract.
//
// It proves the contract is language-neutral: this file knows nothing of the Python code, only
// hollywood_gin.proto (a byte-identical copy lives next to it). The strategy is the greedy one:
// take the upcard or the discard only when that lowers the deadwood, throw the card that leaves
// the least deadwood (the highest card on a tie), knock as soon as a legal knock is within the
// knock limit.
//
// The referee starts this process with GIN_REFEREE (the address, e.g. unix:///tmp/x/referee.sock)
// and GIN_TOKEN (the one-time secret). The bot opens one Play stream, says Hello, answers each
// DecisionRequest with one of its legal actions (echoing request_id), and exits 0 on
// Goodbye(SERIES_OVER). Any error is printed to stderr (with the request id) and exits 1.
// Nothing is ever written to stdout.
//
// It plays on (Hello.plays_on): the referee may play several series in a row on this one stream,
// each opened by its own Welcome. Everything the bot knows of a series (its seat, the knock limit)
// is one record made afresh from each Welcome, so nothing of one series leaks into the next; it
// has no random generator and remembers nothing of the opponent's cards, so there is nothing
// else to reset. (A bot that draws at random seeds a new generator from each Welcome's bot_seed.)
"use strict";

const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const NAME = "node-greedy"; // as in bot.toml
const VERSION = "1.0.0"; // as in bot.toml
const PROTOCOL_VERSION = 1;
const MAX_MESSAGE_BYTES = 1 << 20;
const DEFAULT_KNOCK_LIMIT = 10;
// After the goodbye, how long to wait for the referee to close the stream before leaving anyway.
const CLOSE_WAIT_MS = 2000;

// --- cards -------------------------------------------------------------------------------------

const RANKS = "A23456789TJQK"; // ace low: A-2-3 is a run, Q-K-A is not
const SUITS = "cdhs";

/** A card's notation ("Td") as {text, rank 0..12, suit 0..3, value 1..10}. */
function parseCard(text) {
  if (typeof text !== "string" || text.length !== 2) {
    throw new Error(`not a card: ${JSON.stringify(text)}`);
  }
  const rank = RANKS.indexOf(text[0]);
  const suit = SUITS.indexOf(text[1]);
  if (rank < 0 || suit < 0) {
    throw new Error(`not a card: ${JSON.stringify(text)}`);
  }
  return { text, rank, suit, value: Math.min(rank + 1, 10), index: suit * 13 + rank };
}

// --- deadwood ----------------------------------------------------------------------------------

/**
 * Every meld within `cards` (at most 11 of them), as bit masks over their positions:
 * sets of 3 or 4 cards of one rank (every 3-card subset of a 4-card set too) and runs of 3 or
 * more consecutive ranks of one suit (every sub-run of a longer run).
 */
function allMelds(cards) {
  const melds = [];
  const byRank = new Map();
  const bySuit = new Map();
  cards.forEach((card, position) => {
    if (!byRank.has(card.rank)) byRank.set(card.rank, []);
    byRank.get(card.rank).push(position);
    if (!bySuit.has(card.suit)) bySuit.set(card.suit, new Map());
    bySuit.get(card.suit).set(card.rank, position);
  });
  for (const positions of byRank.values()) {
    const n = positions.length;
    if (n >= 3) {
      for (let a = 0; a < n; a++) {
        for (let b = a + 1; b < n; b++) {
          for (let c = b + 1; c < n; c++) {
            melds.push((1 << positions[a]) | (1 << positions[b]) | (1 << positions[c]));
          }
        }
      }
    }
    if (n === 4) {
      melds.push(positions.reduce((mask, position) => mask | (1 << position), 0));
    }
  }
  for (const ranks of bySuit.values()) {
    for (let start = 0; start < RANKS.length; start++) {
      let mask = 0;
      for (let rank = start; rank < RANKS.length && ranks.has(rank); rank++) {
        mask |= 1 << ranks.get(rank);
        if (rank - start >= 2) melds.push(mask);
      }
    }
  }
  return melds;
}

/** The least deadwood of `cards` (an array of parsed cards, at most 11), by exhaustive search. */
function minDeadwood(cards) {
  if (cards.length > 16) throw new Error(`too many cards for the search: ${cards.length}`);
  const melds = allMelds(cards);
  const memo = new Map();
  // best(rest): the least deadwood of the cards whose positions are set in `rest`. The lowest
  // card left is either deadwood or in some meld made only of cards left.
  const best = (rest) => {
    if (rest === 0) return 0;
    const known = memo.get(rest);
    if (known !== undefined) return known;
    const low = rest & -rest;
    const position = 31 - Math.clz32(low);
    let result = cards[position].value + best(rest & ~low);
    for (const meld of melds) {
      if ((meld & low) !== 0 && (meld & rest) === meld) {
        result = Math.min(result, best(rest & ~meld));
      }
    }
    memo.set(rest, result);
    return result;
  };
  return best((1 << cards.length) - 1);
}

/** The deadwood left after throwing `card` from `cards`. */
function deadwoodWithout(cards, card) {
  return minDeadwood(cards.filter((other) => other.text !== card.text));
}

/**
 * The best of `candidates` (cards of the 11-card `cards`) to throw: the least deadwood left, the
 * highest card value on a tie, then the lowest card index. Returns {card, deadwood} or null.
 */
function bestThrow(cards, candidates) {
  let best = null;
  for (const card of candidates) {
    const deadwood = deadwoodWithout(cards, card);
    if (
      best === null ||
      deadwood < best.deadwood ||
      (deadwood === best.deadwood && card.value > best.card.value) ||
      (deadwood === best.deadwood && card.value === best.card.value && card.index < best.card.index)
    ) {
      best = { card, deadwood };
    }
  }
  return best;
}

/** Whether taking `card` into the 10-card `cards` (then throwing another) lowers the deadwood. */
function improves(cards, card) {
  const after = bestThrow([...cards, card], cards);
  return after !== null && after.deadwood < minDeadwood(cards);
}

// --- decisions ---------------------------------------------------------------------------------

/** The legal actions whose oneof `choice` is `choice` ("upcard", "draw", "discard", "knock"). */
function legalOf(legal, choice) {
  return legal.filter((action) => action.choice === choice);
}

/**
 * What the bot keeps of one series, made from the series' Welcome: its seat and knock limit. A
 * new Welcome (the next series of a sitting) replaces it whole.
 */
function seriesOf(welcome) {
  const rules = welcome.rules;
  return {
    seat: welcome.seat,
    knockLimit: rules && rules.knock_limit > 0 ? rules.knock_limit : DEFAULT_KNOCK_LIMIT,
  };
}

/**
 * One of `request.legal_actions`, as {choice, body}, for the series `series` (from seriesOf).
 * A request for another seat than the Welcome's means the bot and the referee disagree on which
 * series this is (a Welcome missed or misread): the bot refuses it rather than play blind.
 */
function decide(request, series) {
  const legal = request.legal_actions || [];
  if (legal.length === 0) throw new Error("the request lists no legal actions");
  const view = request.observation;
  if (!view) throw new Error("the request has no observation");
  if (view.seat !== series.seat) {
    throw new Error(
      `the request is for seat ${view.seat}, but this series' welcome gave seat ${series.seat}`,
    );
  }
  const knockLimit = series.knockLimit;
  const hand = view.hand.map(parseCard);
  const pile = view.discard_pile.map(parseCard);
  const top = pile.length > 0 ? pile[pile.length - 1] : null;

  switch (request.kind) {
    case "DECISION_KIND_UPCARD": {
      const choices = legalOf(legal, "upcard");
      const take = choices.find((action) => action.upcard.take);
      const pass = choices.find((action) => !action.upcard.take);
      if (take && top !== null && improves(hand, top)) return take;
      if (pass) return pass;
      if (take) return take;
      break;
    }
    case "DECISION_KIND_DRAW": {
      const draws = legalOf(legal, "draw");
      const fromPile = draws.find((action) => action.draw.source === "DRAW_SOURCE_DISCARD_PILE");
      const fromStock = draws.find((action) => action.draw.source === "DRAW_SOURCE_STOCK");
      if (fromPile && top !== null && improves(hand, top)) return fromPile;
      if (fromStock) return fromStock;
      if (fromPile) return fromPile;
      break;
    }
    case "DECISION_KIND_DISCARD": {
      // A card taken from the discard pile this turn may not be thrown (the legal actions say
      // so too; this keeps the bot honest if they ever did not).
      const taken = view.taken_this_turn || "";
      const allowed = (action, choice) => action[choice].card !== taken;
      const knocks = legalOf(legal, "knock").filter((action) => allowed(action, "knock"));
      const knock = bestThrow(
        hand,
        knocks.map((action) => parseCard(action.knock.card)),
      );
      if (knock !== null && knock.deadwood <= knockLimit) {
        return knocks.find((action) => action.knock.card === knock.card.text);
      }
      const discards = legalOf(legal, "discard").filter((action) => allowed(action, "discard"));
      const discard = bestThrow(
        hand,
        discards.map((action) => parseCard(action.discard.card)),
      );
      if (discard !== null) {
        return discards.find((action) => action.discard.card === discard.card.text);
      }
      break;
    }
    default:
      throw new Error(`unknown decision kind ${JSON.stringify(request.kind)}`);
  }
  throw new Error(`no legal action fits decision kind ${request.kind}`);
}

/** The Action message answering `requestId` with the legal action `chosen`. */
function answer(requestId, chosen) {
  const choice = chosen.choice;
  if (!choice || !chosen[choice]) throw new Error("a legal action has no choice set");
  const body = { ...chosen[choice] };
  if (choice === "knock") {
    // Let the referee lay the melds out (the legal knocks do not declare them).
    body.declare_melds = false;
    body.melds = [];
  }
  return { action: { request_id: requestId, [choice]: body } };
}

// --- the stream --------------------------------------------------------------------------------

function loadProtocol() {
  const definition = protoLoader.loadSync(path.join(__dirname, "hollywood_gin.proto"), {
    keepCase: true,
    longs: String, // request_id is uint64: kept as a decimal string, echoed exactly
    enums: String,
    defaults: true,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(definition).hollywood_gin.v1;
}

function fail(text) {
  process.stderr.write(`[${NAME}] ${text}\n`);
  process.exit(1);
}

function main() {
  const address = process.env.GIN_REFEREE;
  const token = process.env.GIN_TOKEN;
  if (!address || token === undefined) {
    fail("GIN_REFEREE and GIN_TOKEN must be set (the referee sets them)");
  }
  const v1 = loadProtocol();
  const client = new v1.Referee(address, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
    "grpc.max_send_message_length": MAX_MESSAGE_BYTES,
  });
  const call = client.Play();
  let series = null; // this series' record (seriesOf), from its Welcome
  let finished = false;

  const leave = (code) => {
    client.close();
    process.exit(code);
  };

  call.on("data", (message) => {
    const kind = message.kind;
    if (kind === "welcome") {
      // The first series, or the next one of a sitting: start it afresh.
      series = seriesOf(message.welcome);
    } else if (kind === "request") {
      const request = message.request;
      const requestId = request.request_id;
      try {
        if (series === null) {
          throw new Error("the referee sent a decision request before the welcome");
        }
        call.write(answer(requestId, decide(request, series)));
      } catch (error) {
        fail(`error on request ${requestId}: ${error && error.stack ? error.stack : error}`);
      }
    } else if (kind === "goodbye") {
      finished = true;
      const reason = message.goodbye.reason;
      if (reason !== "GOODBYE_REASON_SERIES_OVER") {
        fail(`referee said goodbye: ${reason} ${message.goodbye.detail}`);
      }
      call.end();
      setTimeout(() => leave(0), CLOSE_WAIT_MS).unref();
    }
    // Events are not needed by this bot; they and any kind it does not know are ignored.
  });
  call.on("error", (error) => {
    if (finished) leave(0);
    fail(`stream closed by the referee: ${error.code} ${error.details || error.message}`);
  });
  call.on("end", () => {
    if (finished) leave(0);
    fail("the referee closed the stream without a goodbye");
  });

  call.write({
    hello: {
      token,
      name: NAME,
      version: VERSION,
      protocol_version: PROTOCOL_VERSION,
      plays_on: true,
    },
  });
}

if (require.main === module) {
  main();
}

module.exports = { parseCard, minDeadwood, bestThrow, improves, seriesOf, decide, answer };
