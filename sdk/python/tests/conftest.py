"""Fixtures: a real headless Gaffer (a child process group, ended at teardown), its operator HTTP
API, and a tiny fake agent socket for the server misbehaving in ways the real one never does.

The tests import ``gaffer_agent`` from ``src/`` (no install needed); ``test_packaging.py`` checks
the installed package separately.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional

import pytest

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
REPO = HERE.parent.parent.parent
sys.path.insert(0, str(SRC))

READY = re.compile(r"gaffer: agents connect to ws://127\.0\.0\.1:(\d+)/agent")


def run(coro: Awaitable[Any], timeout: float = 60.0) -> Any:
    """Runs one test's coroutine on a fresh loop, bounded in time."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def until(pred: Callable[[], Any], what: str, timeout: float = 10.0, every: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(every)


class Gaffer:
    """A headless Gaffer child process on 127.0.0.1 with a temp data dir."""

    def __init__(self, data_dir: str, args: List[str], port: int = 0) -> None:
        self.data_dir = data_dir
        self.args = args
        self.port = port
        self.operator_token = "gfo_py_" + os.urandom(18).hex()
        self.proc: Optional[subprocess.Popen[str]] = None
        self.output: List[str] = []

    def start(self, timeout: float = 60.0) -> "Gaffer":
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("node is not on PATH (the tests start a real headless Gaffer)")
        env = {**os.environ, "GAFFER_OPERATOR_TOKEN": self.operator_token, "GAFFER_RENDERER_DIR": os.path.join(self.data_dir, "no-renderer")}
        self.proc = subprocess.Popen(
            [node, "--import", "tsx", "src-main/headless/main.ts", "--port", str(self.port), "--data-dir", self.data_dir, *self.args],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: ended whole at teardown
        )
        found = threading.Event()

        def pump(stream: Any) -> None:
            with stream:  # closed at EOF, when the process has exited
                for line in stream:
                    self.output.append(line.rstrip("\n"))
                    m = READY.search(line)
                    if m:
                        self.port = int(m.group(1))
                        found.set()

        threading.Thread(target=pump, args=(self.proc.stdout,), daemon=True).start()
        if not found.wait(timeout):
            self.stop()
            raise RuntimeError("headless Gaffer did not start:\n" + "\n".join(self.output[-40:]))
        return self

    @property
    def agent_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/agent"

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, sig)
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        except ProcessLookupError:
            pass

    # ---- the operator's HTTP API ----

    def api(self, method: str, path: str, body: Any = None, headers: Optional[Dict[str, str]] = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.http + "/api/v1" + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.operator_token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=10) as res:
                return json.loads(res.read())
        except urllib.error.HTTPError as e:
            return json.loads(e.read())

    def token(self, role: Optional[str] = None, name: str = "py") -> str:
        body: Dict[str, Any] = {"name": name}
        if role is not None:
            body["role"] = role
        return self.api("POST", "/tokens", body)["token"]

    def create_task(self, title: str, role: str, **fields: Any) -> Dict[str, Any]:
        return self.api("POST", "/tasks", {"title": title, "role": role, **fields})["task"]

    def task(self, task_id: int) -> Dict[str, Any]:
        return self.api("GET", f"/tasks/{task_id}")["task"]


def _gaffer(args: List[str]) -> Any:
    data_dir = tempfile.mkdtemp(prefix="gaffer-py-")
    g = Gaffer(data_dir, args).start()
    try:
        yield g
    finally:
        g.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


# A short lock window so renewals happen within a test (the SDK renews every window/4).
FAST = ["--lock-window-s", "4", "--sweep-interval-s", "1"]


@pytest.fixture(scope="session")
def gaffer() -> Any:
    """One real Gaffer for the tests that share it (each uses roles of its own)."""
    yield from _gaffer(FAST)


@pytest.fixture
def own_gaffer() -> Any:
    """A Gaffer of this test's own (it is restarted or otherwise disturbed)."""
    yield from _gaffer(FAST)


_roles = iter(range(1, 10_000))


@pytest.fixture
def role() -> str:
    """A role no other test uses, so tests sharing the server never see each other's tasks."""
    return f"py{next(_roles)}"


# ---- a fake agent socket (for bad server replies) ----

try:  # websockets >= 13
    from websockets.asyncio.server import serve as _serve

    def _headers(ws: Any) -> Any:
        return ws.request.headers

except ImportError:  # websockets 10.4 – 12
    from websockets.legacy.server import serve as _serve  # type: ignore[no-redef]

    def _headers(ws: Any) -> Any:
        return ws.request_headers


class FakeServer:
    """Answers ``hello`` like Gaffer (instance ``inst_1``, or the one resumed), and hands every
    other frame to ``on_request(msg, ws)``; a test scripts the replies."""

    def __init__(self, on_request: Callable[[Dict[str, Any], Any], Awaitable[None]], hello: Optional[Callable[[Dict[str, Any]], Any]] = None) -> None:
        self.on_request = on_request
        self.hello_result = hello
        self.sockets: List[Any] = []
        self.auth: List[Optional[str]] = []
        self.frames: List[Dict[str, Any]] = []
        self.hellos: List[Dict[str, Any]] = []
        self._server: Any = None
        self.url = ""

    async def _handle(self, ws: Any, *_: Any) -> None:
        self.sockets.append(ws)
        self.auth.append(_headers(ws).get("Authorization"))
        try:
            async for text in ws:
                msg = json.loads(text)
                self.frames.append(msg)
                if msg.get("type") == "hello":
                    self.hellos.append(msg)
                    result = {
                        "instanceId": msg.get("instanceId", "inst_1"),
                        "heartbeatIntervalMs": 60_000,
                        "lockWindowS": 40,
                        "serverTime": "2026-11-30T09:00:00.000Z",
                        "reconnectGraceS": 10,
                        "protocolVersion": 1,
                        "resumed": "instanceId" in msg,
                        "locks": [],
                    }
                    reply = self.hello_result(msg) if self.hello_result else {"id": msg["id"], "ok": True, "result": result}
                    await ws.send(json.dumps(reply))
                    continue
                await self.on_request(msg, ws)
        except Exception:
            pass

    async def __aenter__(self) -> "FakeServer":
        self._server = await _serve(self._handle, "127.0.0.1", 0)
        port = list(self._server.sockets)[0].getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/agent"
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self._server.close()
        await self._server.wait_closed()

    def of_type(self, type_: str) -> List[Dict[str, Any]]:
        return [f for f in self.frames if f.get("type") == type_]


def reply(ws: Any, msg: Dict[str, Any], result: Any = None) -> Awaitable[None]:
    return ws.send(json.dumps({"id": msg["id"], "ok": True, "result": {} if result is None else result}))


def refuse(ws: Any, msg: Dict[str, Any], code: str, status: int, message: str) -> Awaitable[None]:
    return ws.send(json.dumps({"id": msg["id"], "ok": False, "error": {"code": code, "status": status, "message": message}}))


def wire_task(id_: int, title: str = "t", role: str = "dev", **extra: Any) -> Dict[str, Any]:
    base = {"id": id_, "title": title, "role": role, "status": "in_progress", "priority": 0, "payload": None, "dependsOn": [], "attempt": 1, "previouslyExpired": False}
    return {**base, **extra}
