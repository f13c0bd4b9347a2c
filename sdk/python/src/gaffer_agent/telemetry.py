"""``log`` and ``usage`` for one task or run attempt (PROTOCOL §5), as the TypeScript SDK does them
(``src-main/sdk/log-outbox.ts``; the rule is in docs/protocol.md, "Logs and usage").

Invariants:

1. Every line gets the next per-attempt ``seq`` (1, 2, 3, …). Gaffer stores a seq once, so a
   resend after a lost reply, a reconnect or a Gaffer restart never duplicates a line.
2. One ``log`` frame in flight at a time, of at most ``max_frame_lines`` lines and about
   ``max_frame_bytes`` of JSON. A line leaves memory only once a reply's ``lastSeq`` covers it:
   an acknowledged line is never resent, an unacknowledged one is never lost while the process
   lives.
3. Memory is bounded: ``log`` returns a future that is already done while fewer than
   ``high_water_lines`` lines wait, else done once they drained below it (``await`` it to log at
   Gaffer's pace); past ``max_buffered_lines`` lines are dropped, counted, and one line says how
   many.
4. When Gaffer says the work is no longer ours (``not_holder``, ``not_found``) or refuses the
   token, the outbox stops and discards what it holds (those lines can no longer be stored). A
   frame refused as ``bad_request`` is dropped (it would be refused again) and the rest go on.
   Anything else — a lost connection, a timeout, ``rate_limited`` (the log writer is behind),
   ``unavailable`` — sends the same lines again after a growing pause.
5. Usage increments are summed while they wait and sent after the lines written before them,
   again after a pause when refused as ``rate_limited`` / ``unavailable`` (nothing was recorded).
   A usage frame whose reply was lost is not sent again: it may have been counted, and a repeat
   would count it twice.
6. Text Gaffer cannot store (a lone surrogate) is mended to U+FFFD before it is queued, so one
   line never makes Gaffer refuse a whole frame.

``close()`` sends everything before the report or result, for at most ``flush_timeout`` seconds.
Telemetry never fails the work itself.
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable, Dict, List, Optional

from .errors import AgentClosedError, GafferSdkError, well_formed
from .retry import paused_after_refusal, resend_pause

log = logging.getLogger("gaffer_agent")

LEVELS = ("debug", "info", "warn", "error")
STREAMS = ("stdout", "stderr", "agent")
STOP_CODES = {"not_holder", "not_found", "forbidden", "unauthorized"}

Send = Callable[[str, Dict[str, Any]], Awaitable[Any]]


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Telemetry:
    """The log outbox and usage batcher of one attempt (a claimed task or an acknowledged run)."""

    def __init__(
        self,
        send: Send,
        target: Dict[str, Any],
        *,
        flush_every: float = 0.05,
        max_frame_lines: int = 2000,
        max_frame_bytes: int = 224 * 1024,
        high_water_lines: int = 20_000,
        max_buffered_lines: int = 100_000,
        max_line_chars: int = 64 * 1024,
        flush_timeout: float = 30.0,
    ) -> None:
        self._send = send
        self._target = target
        self._flush_every = flush_every
        self._max_frame_lines = max_frame_lines
        self._max_frame_bytes = max_frame_bytes
        self._high_water = high_water_lines
        self._max_buffered = max_buffered_lines
        self._max_line_chars = max_line_chars
        self._flush_timeout = flush_timeout
        self._lines: List[Dict[str, Any]] = []
        self._sizes: List[int] = []
        self._seq = 0
        self._dropped = 0
        self._usage: Dict[str, Any] = {}
        self._linger: Optional[asyncio.TimerHandle] = None
        self._pump: Optional["asyncio.Task[None]"] = None
        self._room: List["asyncio.Future[None]"] = []
        self.stopped: Optional[str] = None
        """Why the outbox stopped taking lines (invariant 4), or None."""
        self.acknowledged = 0
        """Lines Gaffer acknowledged (stored, or recognised as already stored)."""
        self.truncated = False
        """Gaffer said the attempt's log reached its cap."""
        self.last_usage: Optional[Dict[str, Any]] = None
        """The running total from the latest ``usage`` reply (``{inputTokens, outputTokens, costUsd}``)."""

    @property
    def waiting(self) -> int:
        return len(self._lines)

    # ---- lines ----

    def log(self, text: Any, *, level: str = "info", stream: str = "agent") -> "asyncio.Future[None]":
        if level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}")
        if stream not in STREAMS:
            raise ValueError(f"stream must be one of {', '.join(STREAMS)}")
        loop = asyncio.get_running_loop()
        if self.stopped is not None:
            return _done(loop)
        if len(self._lines) >= self._max_buffered:
            self._dropped += 1
            return self._room_future(loop)
        self._say_dropped()
        self._push(str(text), level, stream)
        if len(self._lines) >= self._max_frame_lines:
            self._start()
        elif self._linger is None:
            self._linger = loop.call_later(self._flush_every, self._start)
        return self._room_future(loop)

    def _say_dropped(self) -> None:
        """Invariant 3: one line says how many were dropped (with the next line, or the flush)."""
        if self._dropped:
            self._push(f"[gaffer sdk] {self._dropped} line(s) dropped: they were logged faster than they could be sent", "warn", "agent")
            self._dropped = 0

    def _push(self, text: str, level: str, stream: str) -> None:
        t = well_formed(text)  # invariant 6
        if len(t) > self._max_line_chars:
            t = f"{t[: self._max_line_chars]} […cut by the SDK: {len(t)} characters in all]"
        self._seq += 1
        line: Dict[str, Any] = {"seq": self._seq, "text": t, "at": now_iso()}
        if stream != "stdout":
            line["stream"] = stream
        if level != "info":
            line["level"] = level
        self._lines.append(line)
        self._sizes.append(len(json.dumps(t, ensure_ascii=False).encode("utf-8")) + 64 + (18 if stream != "stdout" else 0) + (16 if level != "info" else 0))

    def _room_future(self, loop: asyncio.AbstractEventLoop) -> "asyncio.Future[None]":
        if len(self._lines) < self._high_water or self.stopped is not None:
            return _done(loop)
        f: "asyncio.Future[None]" = loop.create_future()
        self._room.append(f)
        return f

    def _settle(self) -> None:
        if len(self._lines) < self._high_water or self.stopped is not None:
            room, self._room = self._room, []
            for f in room:
                if not f.done():
                    f.set_result(None)

    # ---- usage ----

    def usage(self, *, input_tokens: Optional[int] = None, output_tokens: Optional[int] = None, cost_usd: Optional[float] = None, model: Optional[str] = None) -> None:
        for key, value in (("inputTokens", input_tokens), ("outputTokens", output_tokens)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise ValueError(f"{key} must be a non-negative integer")
        if cost_usd is not None and (not isinstance(cost_usd, (int, float)) or isinstance(cost_usd, bool) or cost_usd < 0):
            raise ValueError("cost_usd must be a non-negative number")
        if self.stopped is not None:
            return
        for key, value in (("inputTokens", input_tokens), ("outputTokens", output_tokens), ("costUsd", cost_usd)):
            if value is not None:
                self._usage[key] = self._usage.get(key, 0) + value
        if model is not None:
            self._usage["model"] = well_formed(model)
        if self._linger is None:
            self._linger = asyncio.get_running_loop().call_later(self._flush_every, self._start)

    # ---- sending ----

    def _start(self) -> None:
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        if self._pump is None or self._pump.done():
            self._pump = asyncio.ensure_future(self._run())

    def _frame(self) -> List[Dict[str, Any]]:
        n, size = 0, 0
        for s in self._sizes:
            if n > 0 and (n >= self._max_frame_lines or size + s > self._max_frame_bytes):
                break
            n += 1
            size += s
        return self._lines[:n]

    async def _run(self) -> None:
        try:
            await self._deliver()
        except Exception as e:  # a bug must not fail the work: stop sending, say why
            log.exception("the log outbox failed")
            self.stop(f"the log outbox failed: {e}")

    async def _deliver(self) -> None:
        failures = 0
        while self.stopped is None and (self._lines or self._usage):
            if not self._lines:
                await self._send_usage()
                continue
            frame = self._frame()
            try:
                reply = await self._send("log", {**self._target, "lines": frame})
            except GafferSdkError as e:
                if isinstance(e, AgentClosedError) or e.code in STOP_CODES:
                    self.stop(f"{e.code}: {e.message}")
                    break
                if e.code == "bad_request":
                    log.warning("a log frame was refused; its %d line(s) are dropped: %s", len(frame), e)
                    self._forget(len(frame))
                    continue
                failures += 1  # invariant 4: the same lines again (seq makes it harmless)
                log.warning("log frame not acknowledged (%s); resending", e)
                await asyncio.sleep(resend_pause(failures))
                continue
            failures = 0
            if isinstance(reply, dict) and reply.get("truncated") is True:
                self.truncated = True
            last = reply.get("lastSeq") if isinstance(reply, dict) else None
            if isinstance(last, int) and not isinstance(last, bool):
                n = 0
                while n < len(self._lines) and self._lines[n]["seq"] <= last:
                    n += 1
            else:  # a Gaffer that does not say (before seq): the frame is taken care of
                n = len(frame)
            self._forget(n)
            self.acknowledged += n
        self._settle()

    def _forget(self, n: int) -> None:
        del self._lines[:n]
        del self._sizes[:n]
        self._settle()

    async def _send_usage(self) -> None:
        figures, self._usage = self._usage, {}
        attempt = 0
        while self.stopped is None:
            attempt += 1
            try:
                reply = await self._send("usage", {**self._target, **figures})
            except GafferSdkError as e:
                if isinstance(e, AgentClosedError) or e.code in STOP_CODES:
                    self.stop(f"{e.code}: {e.message}")
                elif await paused_after_refusal(e, attempt):
                    continue
                else:  # invariant 5: refused for good, or maybe counted (a lost reply): not sent again
                    log.warning("usage not recorded (%s): %s", e, figures)
                return
            if isinstance(reply, dict) and isinstance(reply.get("usage"), dict):
                self.last_usage = reply["usage"]
            return

    async def flush(self) -> None:
        """Returns once everything queued so far was acknowledged (or the outbox stopped)."""
        if self.stopped is None:
            self._say_dropped()
        while self.stopped is None and (self._lines or self._usage or (self._pump is not None and not self._pump.done())):
            self._start()
            assert self._pump is not None
            await asyncio.shield(self._pump)

    def stop(self, reason: str) -> None:
        """Stops at once and discards what waits (the work was taken away, or finished)."""
        if self.stopped is not None:
            return
        self.stopped = reason
        if self._lines:
            log.warning("%d log line(s) discarded: %s", len(self._lines), reason)
        self._lines.clear()
        self._sizes.clear()
        self._usage.clear()
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        self._settle()

    async def close(self) -> None:
        """Sends whatever waits (before the report/result), for at most ``flush_timeout`` seconds."""
        try:
            await asyncio.wait_for(self.flush(), self._flush_timeout)
        except asyncio.TimeoutError:
            self.stop(f"its lines were not acknowledged within {self._flush_timeout:g} s")


def _done(loop: asyncio.AbstractEventLoop) -> "asyncio.Future[None]":
    f: "asyncio.Future[None]" = loop.create_future()
    f.set_result(None)
    return f
