"""A small Chrome DevTools Protocol driver: headless Chromium, one page, navigate, evaluate, click, screenshot.

Enough to drive the viewer as a user does; websocket-client (the test extra) carries the protocol.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import websocket

NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")
NAVIGATING = "Inspected target navigated or closed"  # CDP's error for an expression sent while a page is left


def find_chromium() -> str | None:
    """Return the path of a Chromium binary on the PATH, or None."""
    return next((found for name in NAMES if (found := shutil.which(name))), None)


class BrowserError(RuntimeError):
    """Chromium did not start, or a page did not reach the state a test waited for."""


class Browser:
    """One headless Chromium with one page, driven over CDP."""

    def __init__(self, binary: str, profile: Path, width: int = 1400, height: int = 1000):
        self.process = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", f"--user-data-dir={profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = self._port(profile)
        pages = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10).read())
        target = next(p for p in pages if p["type"] == "page")
        self.ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.next_id = 0
        self.send("Page.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _port(self, profile: Path, timeout: float = 30.0) -> int:
        """Return the debugging port Chromium wrote to its profile (DevToolsActivePort)."""
        marker = profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if marker.is_file() and marker.read_text().strip():
                return int(marker.read_text().split()[0])
            if self.process.poll() is not None:
                raise BrowserError(f"chromium exited with {self.process.returncode}: {self.process.stderr.read()}")
            time.sleep(0.1)
        raise BrowserError("chromium did not open its debugging port within 30 s")

    def send(self, method: str, **params) -> dict:
        """Send one CDP command and return its result (events in between are skipped)."""
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})

    def js(self, expression: str):
        """Evaluate a JavaScript expression in the page (promises awaited) and return its value."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait(self, expression: str, timeout: float = 15.0):
        """Return the expression's value once it is truthy; BrowserError with the page's text when it never is."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                value = self.js(expression)
            except BrowserError as error:  # a click's navigation under way: the old page's context is gone
                if NAVIGATING not in str(error):
                    raise
                value = None
            if value:
                return value
            time.sleep(0.1)
        raise BrowserError(f"waited {timeout} s for {expression}; the page shows: {self.text()[:600]}")

    def open(self, url: str, ready: str) -> None:
        """Navigate to `url` and wait until the `ready` expression holds."""
        self.send("Page.navigate", url=url)
        self.wait(ready)

    def click(self, selector: str) -> None:
        """Click the first element matching a CSS selector (as a user's click: the element's own handler runs)."""
        if not self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
                       f"if (!e) return false; e.click(); return true; }})()"):
            raise BrowserError(f"nothing matches {selector}; the page shows: {self.text()[:600]}")

    def select(self, selector: str, value: str) -> None:
        """Choose an option of a <select> and fire its change event."""
        self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.value = {json.dumps(value)}; "
                f"e.dispatchEvent(new Event('change')); }})()")

    def text(self) -> str:
        """Return the page's visible text."""
        return self.js("document.body ? document.body.innerText : ''") or ""

    def screenshot(self, path: Path) -> Path:
        """Write a PNG of the whole page (beyond the window's height) to `path`."""
        shot = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    def close(self) -> None:
        """Close the connection and stop Chromium."""
        try:
            self.ws.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
