"""A tiny DevTools client for Debian's headless Chromium, over pipes (no port, no network).

``--remote-debugging-pipe`` makes Chromium read DevTools commands on fd 3 and answer on fd 4,
each message JSON ended by a NUL byte. That is all the browser tests need: load a page, collect
console errors and network requests, click, press keys, read the DOM, take a screenshot.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--no-first-run",
    "--no-default-browser-check",
    "--no-proxy-server",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--mute-audio",
    "--remote-debugging-pipe",
)
TIMEOUT_S = 30.0
START_TIMEOUT_S = 60.0
"""The first answer may take longer: a loaded machine (the full suite on two cores) starts a
browser slowly."""


def find_chromium() -> str | None:
    """The Chromium binary, if installed (``make browser-deps`` installs Debian's)."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    """Chromium answered a command with an error, or went quiet."""


def launch(binary: str, profile: Path, tries: int = 2) -> Chromium:
    """A started browser (a context manager still: ``with launch(...) as chromium``).

    A browser that does not answer its first command is ended and a fresh one started, once: on
    a loaded machine a start can stall, and that says nothing of the pages under test.
    """
    for attempt in range(1, tries + 1):
        chromium = Chromium(binary, profile.with_name(f"{profile.name}-{attempt}"))
        try:
            return chromium.__enter__()
        except BrowserError:
            if attempt == tries:
                raise
    raise AssertionError("unreachable")


class Chromium:
    """One headless Chromium with one page; a context manager that always ends the browser."""

    def __init__(self, binary: str, profile: Path) -> None:
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # Move the browser's ends above fd 10 so that 3< and 4> cannot clobber them (bash, since
        # dash takes one-digit fds only).
        child_in = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
        child_out = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)
        script = f'exec "$0" "$@" 3<&{child_in} 4>&{child_out} {child_in}<&- {child_out}>&-'
        profile.mkdir(parents=True, exist_ok=True)
        # The browser's stderr goes to a file, never to a pipe nobody reads (a full pipe would
        # stop the browser); its tail is in the error when the browser goes quiet.
        self.stderr_path = profile.parent / f"{profile.name}.stderr"
        with self.stderr_path.open("wb") as stderr:
            self.process = subprocess.Popen(
                ["bash", "-c", script, binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                pass_fds=(child_in, child_out),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        os.close(child_in)
        os.close(child_out)
        self.write_fd = to_browser_w
        self.read_fd = from_browser_r
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session = ""

    def __enter__(self) -> Chromium:
        if self.session:
            return self  # started already (by ``launch``)
        try:
            target = self.call(
                "Target.createTarget", {"url": "about:blank"}, False, START_TIMEOUT_S
            )
            attached = self.call(
                "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}, False
            )
            self.session = attached["sessionId"]
            for domain in ("Runtime", "Log", "Page", "Network"):
                self.call(f"{domain}.enable")
        except BaseException as error:
            self._end()  # the browser is never left running behind a failed start
            if isinstance(error, BrowserError):
                raise BrowserError(f"{error}; its stderr ends: {self.stderr_tail()!r}") from None
            raise
        return self

    def stderr_tail(self, size: int = 2000) -> str:
        """The last ``size`` bytes the browser wrote to its stderr."""
        try:
            data = self.stderr_path.read_bytes()
        except OSError:
            return ""
        return data[-size:].decode(errors="replace")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self.call("Browser.close", session=False)
        self._end(grace_s=10)

    def _end(self, grace_s: float = 0.0) -> None:
        """Wait up to ``grace_s`` for the browser to end, then kill it; close the pipes once."""
        try:
            self.process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self.write_fd, self.read_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.write_fd = self.read_fd = -1

    # --- the protocol --------------------------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        os.write(self.write_fd, json.dumps(message).encode() + b"\0")

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.read_fd], [], [], max(0.0, left))
            if not ready:
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self.read_fd, 1 << 16)
            if not chunk:
                raise BrowserError("Chromium closed the DevTools pipe")
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        data: dict[str, Any] = json.loads(message)
        return data

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: bool = True,
        timeout_s: float = TIMEOUT_S,
    ) -> dict[str, Any]:
        """Send one command and wait for its answer (keeping the events that come meanwhile)."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        self._send(message)
        deadline = time.monotonic() + timeout_s
        while True:
            answer = self._receive(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            if "method" in answer:
                self.events.append(answer)

    def wait_for_event(self, method: str) -> dict[str, Any]:
        """Wait for an event (or take it if it already came)."""
        for event in self.events:
            if event["method"] == method:
                return event
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            message = self._receive(deadline)
            if "method" in message:
                self.events.append(message)
                if message["method"] == method:
                    return message

    # --- what a test does ----------------------------------------------------------------------

    def open(self, path: Path, width: int = 1280, height: int = 900, fragment: str = "") -> None:
        """Load a local file (at ``#fragment``, if given) and wait for its load event."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        )
        url = path.resolve().as_uri() + (f"#{fragment}" if fragment else "")
        self.call("Page.navigate", {"url": url})
        self.wait_for_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page.

        Raises:
            BrowserError: the expression threw.
        """
        answer = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in answer:
            raise BrowserError(f"{expression}: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click at the middle of the element."""
        box = self.evaluate(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1},
            )

    def press(self, key: str, code: int) -> None:
        """A real key press (``key`` as the DOM names it, ``code`` its virtual key code)."""
        for kind in ("keyDown", "keyUp"):
            self.call(
                "Input.dispatchKeyEvent",
                {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code},
            )

    def screenshot(self, path: Path) -> None:
        """Save a PNG of the page."""
        shot = self.call("Page.captureScreenshot", {"format": "png"})
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))

    def errors(self) -> list[str]:
        """Every console error, uncaught exception and error log entry so far."""
        found = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.exceptionThrown":
                found.append(str(params.get("exceptionDetails")))
            elif event["method"] == "Runtime.consoleAPICalled" and params.get("type") in (
                "error",
                "assert",
            ):
                found.append(str(params.get("args")))
            elif event["method"] == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(str(params["entry"]))
        return found

    def requests(self) -> list[str]:
        """The URL of every request the page made."""
        return [
            event["params"]["request"]["url"]
            for event in self.events
            if event["method"] == "Network.requestWillBeSent"
        ]
