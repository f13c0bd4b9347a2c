"""``log`` and ``usage`` for one task or run (PROTOCOL §5), batched.

Log lines are collected and sent as one ``log`` frame every ``flush_every`` seconds (or at once
when ``max_lines`` are waiting); usage increments are summed and sent as one ``usage`` frame.
Everything waiting is flushed before the task's report or the run's result. A Gaffer that does
not know these frames (``bad_request``) turns the batcher off with one warning, and a lock or run
taken away (``not_holder``) drops what is left; a batch lost to a connection blip is dropped.
Telemetry never fails the work itself.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable, Dict, List, Optional

from .errors import GafferSdkError

log = logging.getLogger("gaffer_agent")

LEVELS = ("debug", "info", "warn", "error")
STREAMS = ("stdout", "stderr", "agent")
MAX_TEXT = 10_000

Send = Callable[[str, Dict[str, Any]], Awaitable[Any]]


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Telemetry:
    def __init__(self, send: Send, target: Dict[str, Any], *, flush_every: float = 0.5, max_lines: int = 100) -> None:
        self._send = send
        self._target = target
        self._flush_every = flush_every
        self._max_lines = max_lines
        self._lines: List[Dict[str, Any]] = []
        self._usage: Dict[str, Any] = {}
        self._timer: Optional["asyncio.Task[None]"] = None
        self._off = False
        self.last_usage: Optional[Dict[str, Any]] = None
        """The running total from the latest ``usage`` reply (``{inputTokens, outputTokens, costUsd}``)."""

    def log(self, text: str, *, level: str = "info", stream: str = "agent") -> None:
        if level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}")
        if stream not in STREAMS:
            raise ValueError(f"stream must be one of {', '.join(STREAMS)}")
        if self._off:
            return
        text = str(text)
        self._lines.append({"text": text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…", "level": level, "stream": stream, "at": now_iso()})
        self._schedule(now=len(self._lines) >= self._max_lines)

    def usage(self, *, input_tokens: Optional[int] = None, output_tokens: Optional[int] = None, cost_usd: Optional[float] = None, model: Optional[str] = None) -> None:
        if self._off:
            return
        for key, value in (("inputTokens", input_tokens), ("outputTokens", output_tokens)):
            if value is not None:
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise ValueError(f"{key} must be a non-negative integer")
                self._usage[key] = self._usage.get(key, 0) + value
        if cost_usd is not None:
            if not isinstance(cost_usd, (int, float)) or isinstance(cost_usd, bool) or cost_usd < 0:
                raise ValueError("cost_usd must be a non-negative number")
            self._usage["costUsd"] = self._usage.get("costUsd", 0) + cost_usd
        if model is not None:
            self._usage["model"] = model
        self._schedule(now=False)

    def _schedule(self, now: bool) -> None:
        if self._timer is not None and not self._timer.done():
            if not now:
                return
            self._timer.cancel()
        self._timer = asyncio.ensure_future(self._flush_later(0 if now else self._flush_every))

    async def _flush_later(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self._timer = None
        await self.flush()

    async def flush(self) -> None:
        while self._lines and not self._off:
            batch, self._lines = self._lines[: self._max_lines], self._lines[self._max_lines :]
            await self._deliver("log", {**self._target, "lines": batch})
        if self._usage and not self._off:
            figures, self._usage = self._usage, {}
            reply = await self._deliver("usage", {**self._target, **figures})
            if isinstance(reply, dict) and isinstance(reply.get("usage"), dict):
                self.last_usage = reply["usage"]

    async def _deliver(self, type_: str, fields: Dict[str, Any]) -> Any:
        try:
            return await self._send(type_, fields)
        except GafferSdkError as e:
            if e.code in ("bad_request", "not_holder"):
                if e.code == "bad_request":
                    log.warning("this Gaffer refused a %s frame (%s); log lines and usage are not sent for this work", type_, e)
                self._off = True
                self._lines.clear()
                self._usage.clear()
            else:  # a blip or a timeout: this batch is lost, later ones are tried
                log.warning("%s not sent: %s", type_, e)
            return None

    async def close(self) -> None:
        """Sends whatever is waiting (before the report/result)."""
        if self._timer is not None and not self._timer.done() and self._timer is not asyncio.current_task():
            self._timer.cancel()
        self._timer = None
        await self.flush()
