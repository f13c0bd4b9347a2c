"""The SDK's connection: one WebSocket at a time, request/reply matching, heartbeats, and
reconnection with exponential backoff + jitter that resumes the same instance.

Invariants (the same as the TypeScript SDK's ``connection.ts``):

1. The token travels only in the ``Authorization`` header of the upgrade: never in the URL, never
   in a frame, never in a log line.
2. Requests made while the socket is down wait (within their timeout) and go out once ``hello``
   has been answered on the new socket. Requests in flight when a socket dies fail with
   ``ConnectionLostError``: they may or may not have taken effect, and only the caller knows
   whether repeating them is harmless.
3. Reconnecting says ``hello`` with the previous ``instanceId``, so within the server's reconnect
   grace the instance — and its locks — survive the blip.
4. An authentication refusal (HTTP 401/403 on the upgrade, ``unauthorized``/``forbidden`` to
   hello, close codes 4401/4403), a protocol violation (4400, a malformed hello reply) or being
   superseded (4409) ends the connection for good: retrying cannot help.
5. Replies are matched by ``id``; a frame that is not JSON, a reply nobody waits for and an
   unknown push are logged and ignored, never raised into the agent.
6. A request holding text UTF-8 cannot carry (a lone surrogate, e.g. from ``surrogateescape``) is
   refused at once as ``bad_request`` naming the field, as Gaffer would refuse it — never left to
   fail inside the socket library and time out.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import random as _random
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, List, Optional
from urllib.parse import urlsplit, urlunsplit

from . import _ws
from .errors import AgentClosedError, ConnectionLostError, GafferRequestError, GafferSdkError, RequestTimeoutError, has_lone_surrogate
from .models import HelloResult

log = logging.getLogger("gaffer_agent")

CLOSE_PROTOCOL_VIOLATION = 4400
CLOSE_UNAUTHORIZED = 4401
CLOSE_REVOKED = 4403
CLOSE_SUPERSEDED = 4409
FATAL_CLOSE = {CLOSE_PROTOCOL_VIOLATION, CLOSE_UNAUTHORIZED, CLOSE_REVOKED, CLOSE_SUPERSEDED}
FATAL_CODES = {"unauthorized", "forbidden", "bad_request", "protocol"}


@dataclass(frozen=True)
class ReconnectPolicy:
    initial_delay: float = 0.25
    """First delay, seconds."""
    max_delay: float = 30.0
    """Cap, seconds."""
    max_attempts: Optional[int] = None
    """Give up after this many failed attempts in a row (None: never)."""


def backoff_delay(attempt: int, policy: ReconnectPolicy = ReconnectPolicy(), random: Callable[[], float] = _random.random) -> float:
    """Delay before reconnect attempt ``attempt`` (1-based): exponential, capped, with "equal
    jitter" (between half and all of the step), so a fleet of agents does not reconnect in lockstep."""
    step = min(policy.max_delay, policy.initial_delay * 2 ** min(attempt - 1, 30))
    return step / 2 + random() * step / 2


def agent_url(url: str) -> str:
    """Accepts ``ws://host:port/agent`` or an ``http(s)://host:port`` base (→ ``/agent``)."""
    u = urlsplit(url)
    scheme = {"http": "ws", "https": "wss"}.get(u.scheme, u.scheme)
    if scheme not in ("ws", "wss"):
        raise ValueError(f"unsupported agent URL scheme {u.scheme!r}")
    if u.username or u.password or "token=" in u.query.lower():
        raise ValueError("put the token in the `token` argument, not in the URL")
    path = u.path if u.path not in ("", "/") else "/agent"
    return urlunsplit((scheme, u.netloc, path, u.query, ""))


def _ill_formed_at(value: Any, path: str = "") -> str:
    """The dotted path of the first string or key holding a surrogate (as Gaffer names a field)."""
    if isinstance(value, str):
        return path if has_lone_surrogate(value) else ""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, (list, tuple)) else ()
    for k, v in items:
        here = f"{path}.{k}" if path else str(k)
        if isinstance(k, str) and has_lone_surrogate(k):
            return here
        found = _ill_formed_at(v, here)
        if found:
            return found
    return ""


class _Pending:
    __slots__ = ("id", "type", "frame", "future", "gen")

    def __init__(self, id_: str, type_: str, frame: str, future: "asyncio.Future[Any]") -> None:
        self.id = id_
        self.type = type_
        self.frame = frame
        self.future = future
        self.gen: Optional[int] = None


class Connection:
    def __init__(
        self,
        url: str,
        *,
        token: str,
        role: str,
        name: str,
        version: Optional[str] = None,
        request_timeout: float = 30.0,
        connect_timeout: float = 10.0,
        reconnect: ReconnectPolicy | bool = True,
        heartbeat_interval: Optional[float] = None,
        random: Callable[[], float] = _random.random,
        on_ready: Callable[[HelloResult, bool], None] = lambda h, first: None,
        on_down: Callable[[int, str], None] = lambda code, reason: None,
        on_reconnecting: Callable[[int, float], None] = lambda attempt, delay: None,
        on_push: Callable[[Dict[str, Any]], None] = lambda push: None,
        on_closed: Callable[[Optional[BaseException]], None] = lambda error: None,
    ) -> None:
        self.url = agent_url(url)
        self._token = token
        self.role = role
        self.name = name
        self.version = version
        self.request_timeout = request_timeout
        self.connect_timeout = connect_timeout
        self.policy: Optional[ReconnectPolicy] = None if reconnect is False else (reconnect if isinstance(reconnect, ReconnectPolicy) else ReconnectPolicy())
        self.heartbeat_interval = heartbeat_interval
        self._random = random
        self._on_ready, self._on_down, self._on_reconnecting = on_ready, on_down, on_reconnecting
        self._on_push, self._on_closed = on_push, on_closed
        self.state = "idle"  # idle | connecting | ready | reconnecting | closed
        self.hello: Optional[HelloResult] = None
        self._ws: Any = None
        self._gen = 0
        self._ids = itertools.count(1)
        self._pending: Dict[str, _Pending] = {}
        self._queued: List[_Pending] = []
        self._tasks: set["asyncio.Task[Any]"] = set()
        self._heartbeat: Optional["asyncio.Task[None]"] = None
        self._reconnector: Optional["asyncio.Task[None]"] = None
        self._reader: Optional["asyncio.Task[None]"] = None
        self.closed_error: Optional[BaseException] = None

    @property
    def instance_id(self) -> Optional[str]:
        return self.hello.instance_id if self.hello else None

    # ---- public ----

    async def open(self) -> HelloResult:
        """The first connection; raises (and closes for good) if it cannot be made."""
        if self.state != "idle":
            raise RuntimeError("already opened")
        try:
            return await self._dial(resume=False)
        except BaseException as e:
            self._finish(e if isinstance(e, Exception) else None)
            raise

    async def request(self, type_: str, fields: Optional[Dict[str, Any]] = None, timeout: Optional[float] = None) -> Any:
        """Sends a request; returns its ``result``; raises a GafferSdkError subclass."""
        if self.state == "closed":
            raise AgentClosedError()
        timeout = self.request_timeout if timeout is None else timeout
        id_ = f"r{next(self._ids)}"
        frame = json.dumps({**(fields or {}), "id": id_, "type": type_}, separators=(",", ":"), ensure_ascii=False)
        if has_lone_surrogate(frame):  # invariant 6
            raise GafferRequestError("bad_request", 400, f"invalid {type_} request at \"{_ill_formed_at(fields)}\": must be valid Unicode text (it holds a lone surrogate, which cannot be stored)")
        p = _Pending(id_, type_, frame, asyncio.get_running_loop().create_future())
        self._pending[id_] = p
        if self.state == "ready":
            self._spawn(self._transmit(p))
        else:
            self._queued.append(p)
        try:
            return await asyncio.wait_for(asyncio.shield(p.future), timeout)
        except asyncio.TimeoutError:
            raise RequestTimeoutError(type_, timeout) from None
        finally:
            self._drop(p)
            if not p.future.done():
                p.future.cancel()

    async def close(self, code: int = 1000, reason: str = "agent closing") -> None:
        """Closes for good; returns once the socket is closed."""
        ws = self._ws
        self._finish(None)
        if ws is not None:
            try:
                await asyncio.wait_for(ws.close(code, reason), 3)
            except (asyncio.TimeoutError, OSError, _ws.ConnectionClosed):
                _ws.abort(ws)
        reader = self._reader
        if reader is not None and not reader.done():
            try:
                await asyncio.wait_for(asyncio.shield(reader), 3)
            except asyncio.TimeoutError:
                reader.cancel()
        for t in list(self._tasks):
            t.cancel()

    def drop_socket(self) -> None:
        """Drops the current socket without a close frame (a network blip); reconnects as usual."""
        if self._ws is not None:
            _ws.abort(self._ws)

    # ---- internals ----

    def _spawn(self, coro: Awaitable[Any]) -> None:
        t = asyncio.ensure_future(coro)
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    async def _dial(self, resume: bool) -> HelloResult:
        self.state = "reconnecting" if resume else "connecting"
        self._gen += 1
        gen = self._gen
        try:
            ws = await _ws.open_socket(self.url, self._token, self.connect_timeout)
        except Exception as e:
            refused = _ws.refusal(e)
            if refused is not None:
                status, code, message = refused
                raise GafferRequestError(code, status, message) from None
            raise GafferSdkError("connect_failed", f"cannot reach {self.url}: {e}") from None
        if self.state == "closed":
            _ws.abort(ws)
            raise AgentClosedError()
        self._ws = ws
        self._reader = asyncio.ensure_future(self._read(ws, gen))
        fields: Dict[str, Any] = {"role": self.role, "name": self.name}
        if self.version is not None:
            fields["version"] = self.version
        if resume and self.hello is not None:
            fields["instanceId"] = self.hello.instance_id
        id_ = f"h{next(self._ids)}"
        p = _Pending(id_, "hello", json.dumps({**fields, "id": id_, "type": "hello"}), asyncio.get_running_loop().create_future())
        p.gen = gen
        self._pending[id_] = p
        try:
            await ws.send(p.frame)
            raw = await asyncio.wait_for(asyncio.shield(p.future), self.connect_timeout)
            hello = HelloResult.from_wire(raw)
        except asyncio.TimeoutError:
            _ws.abort(ws)
            raise GafferSdkError("timeout", "no hello reply in time") from None
        except ValueError as e:
            _ws.abort(ws)
            raise GafferSdkError("protocol", f"the server's hello reply is malformed: {e}") from None
        except _ws.ConnectionClosed:
            raise self._closed_error_for_hello(*_ws.close_info(ws)) from None
        except GafferSdkError:
            _ws.abort(ws)
            raise
        finally:
            self._pending.pop(id_, None)
        first = self.hello is None
        self.hello = hello
        self.state = "ready"
        self._start_heartbeat()
        log.info("connected instance=%s resumed=%s", hello.instance_id, bool(hello.resumed))
        self._on_ready(hello, first)
        queued, self._queued = self._queued, []
        for q in queued:
            if not q.future.done():
                self._spawn(self._transmit(q))
        return hello

    async def _transmit(self, p: _Pending) -> None:
        ws = self._ws
        if ws is None or self.state != "ready":
            self._queued.append(p)
            return
        p.gen = self._gen
        try:
            await ws.send(p.frame)
        except (_ws.ConnectionClosed, OSError):
            if not p.future.done():
                p.future.set_exception(ConnectionLostError())

    def _drop(self, p: _Pending) -> None:
        self._pending.pop(p.id, None)
        if p in self._queued:
            self._queued.remove(p)

    async def _read(self, ws: Any, gen: int) -> None:
        try:
            async for text in ws:
                self._receive(text)
        except _ws.ConnectionClosed:
            pass
        except Exception as e:  # a library error on a broken socket: treat as a close
            log.warning("socket read failed: %s", e)
        code, reason = _ws.close_info(ws)
        self._socket_closed(gen, code, reason)

    def _receive(self, text: Any) -> None:
        if not isinstance(text, str):
            log.warning("ignoring a binary frame")
            return
        try:
            msg = json.loads(text)
        except ValueError:
            log.warning("ignoring a frame that is not JSON")
            return
        if not isinstance(msg, dict):
            log.warning("ignoring a frame that is not an object")
            return
        if "ok" in msg:
            id_ = msg.get("id")
            p = self._pending.get(id_) if isinstance(id_, str) else None
            if p is None:
                if msg.get("ok") is False:
                    log.warning("server error for no pending request: %s", msg.get("error"))
                return
            if p.future.done():
                return
            if msg["ok"] is True:
                p.future.set_result(msg.get("result", {}))
            else:
                err = msg.get("error") if isinstance(msg.get("error"), dict) else {}
                status = err.get("status")
                p.future.set_exception(
                    GafferRequestError(
                        str(err.get("code") or "internal"),
                        status if isinstance(status, int) else 500,
                        str(err.get("message") or "request refused"),
                    )
                )
            return
        if isinstance(msg.get("type"), str):
            self._on_push(msg)

    def _socket_closed(self, gen: int, code: int, reason: str) -> None:
        if gen != self._gen:
            return
        self._ws = None
        self._stop_heartbeat()
        # Invariant 2: whatever was sent on this socket is lost.
        for id_, p in list(self._pending.items()):
            if p.gen == gen and not p.future.done():
                if p.type == "hello":
                    p.future.set_exception(self._closed_error_for_hello(code, reason))
                else:
                    p.future.set_exception(ConnectionLostError())
        if self.state == "closed" or self.state != "ready":
            return
        log.warning("disconnected code=%s reason=%s", code, reason)
        self._on_down(code, reason)
        if code in FATAL_CLOSE:
            kind = "protocol" if code == CLOSE_PROTOCOL_VIOLATION else "unauthorized"
            self._finish(GafferSdkError(kind, f"closed by the server ({code} {reason})"))
            return
        self.state = "reconnecting"
        self._reconnector = asyncio.ensure_future(self._reconnect())

    def _closed_error_for_hello(self, code: int, reason: str) -> GafferSdkError:
        kind = "protocol" if code == CLOSE_PROTOCOL_VIOLATION else "unauthorized" if code in FATAL_CLOSE else "connect_failed"
        return GafferSdkError(kind, f"socket closed during hello ({code} {reason})")

    async def _reconnect(self) -> None:
        attempt = 0
        while self.state != "closed":
            if self.policy is None:
                self._finish(ConnectionLostError("connection lost and reconnect is disabled"))
                return
            attempt += 1
            if self.policy.max_attempts is not None and attempt > self.policy.max_attempts:
                self._finish(ConnectionLostError(f"gave up after {attempt - 1} reconnect attempts"))
                return
            delay = backoff_delay(attempt, self.policy, self._random)
            self._on_reconnecting(attempt, delay)
            await asyncio.sleep(delay)
            if self.state == "closed":
                return
            try:
                await self._dial(resume=True)
                return
            except AgentClosedError:
                return
            except GafferSdkError as e:
                if e.code in FATAL_CODES:
                    self._finish(e)
                    return
                log.warning("reconnect attempt %d failed: %s", attempt, e)

    def _start_heartbeat(self) -> None:
        self._stop_heartbeat()
        every = self.heartbeat_interval
        if every is None:
            every = (self.hello.heartbeat_interval_ms / 1000) if self.hello else 20.0
        self._heartbeat = asyncio.ensure_future(self._beat(every))

    async def _beat(self, every: float) -> None:
        while self.state == "ready":
            await asyncio.sleep(every)
            if self.state != "ready":
                return
            try:
                await self.request("heartbeat", timeout=max(every, 5.0))
            except (ConnectionLostError, AgentClosedError):
                return
            except GafferSdkError as e:
                log.warning("heartbeat refused: %s", e)

    def _stop_heartbeat(self) -> None:
        if self._heartbeat is not None and self._heartbeat is not asyncio.current_task():
            self._heartbeat.cancel()
        self._heartbeat = None

    def _finish(self, error: Optional[BaseException]) -> None:
        """Enters the final state: fails everything waiting, stops timers."""
        if self.state == "closed":
            return
        self.state = "closed"
        self.closed_error = error
        self._stop_heartbeat()
        if self._reconnector is not None and self._reconnector is not asyncio.current_task():
            self._reconnector.cancel()
        for p in list(self._pending.values()):
            if not p.future.done():
                p.future.set_exception(error if isinstance(error, GafferSdkError) and not isinstance(error, ConnectionLostError) else AgentClosedError())
        self._pending.clear()
        self._queued.clear()
        if error is not None:
            log.warning("connection closed: %s", error)
        self._on_closed(error)
