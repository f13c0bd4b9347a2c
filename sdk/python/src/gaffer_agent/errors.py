"""Errors of the Gaffer agent SDK (the same classes and meanings as the TypeScript SDK).

Raised *by the SDK*: ``GafferRequestError`` (the server refused a request; ``code`` is the
protocol's error code), ``ConnectionLostError``, ``RequestTimeoutError``, ``AgentClosedError``;
``LockLostError`` / ``RunCancelledError`` are the reasons a handler was cancelled.

Raised *by your handlers* to say how work ended:

* jobs (``on_job``): ``RetryableError`` → errorClass ``retryable``, ``FatalError`` → ``fatal``,
  ``NeedsHumanError`` → ``needs_human``; anything else → the handler's default (``retryable``).
* tasks (``work``): ``BlockedError`` / ``NeedsHumanError`` → ``blocked``, ``BacklogError`` /
  ``RetryableError`` → ``backlog`` (give it back), ``FatalError`` / ``TaskFailedError`` / anything
  else → ``failed``.

Classification also works by duck typing (``error_class`` / ``report_status`` attributes), so an
error class of your own can say how it maps.
"""

from __future__ import annotations

import re
from typing import Any, Optional

ERROR_CLASSES = ("retryable", "fatal", "needs_human")
REPORT_STATUSES = ("done", "failed", "blocked", "backlog")


class GafferSdkError(Exception):
    """Base of everything the SDK raises; ``code`` is stable."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class GafferRequestError(GafferSdkError):
    """The server answered a request with ``{"ok": false, "error": …}`` (or refused the upgrade)."""

    def __init__(self, code: str, status: int, message: str) -> None:
        super().__init__(code, message)
        self.status = status

    def __str__(self) -> str:
        return f"{self.code} ({self.status}): {self.message}"


class ConnectionLostError(GafferSdkError):
    """The socket closed while the request was in flight: it may or may not have taken effect."""

    def __init__(self, message: str = "connection lost before the reply arrived") -> None:
        super().__init__("disconnected", message)


class RequestTimeoutError(GafferSdkError):
    def __init__(self, type_: str, seconds: float) -> None:
        super().__init__("timeout", f"no reply to {type_} within {seconds:g} s")


class AgentClosedError(GafferSdkError):
    def __init__(self, message: str = "the agent is closed") -> None:
        super().__init__("closed", message)


class LockLostError(GafferSdkError):
    """Why a task handler was cancelled: the lock is no longer ours (P5).

    ``lost_because`` is the reason of Gaffer's ``lock_lost`` push (``force_release``, ``expired``,
    ``cancelled``, ``budget``), or None when the loss showed otherwise (a refused renewal, a
    reconnect that found the lock gone)."""

    def __init__(self, task_id: int, message: str, lost_because: Optional[str] = None) -> None:
        super().__init__("lock_lost", message)
        self.task_id = task_id
        self.lost_because = lost_because


class RunCancelledError(GafferSdkError):
    """Why a job handler was cancelled: Gaffer took the run away (operator, deadline, budget, kill switch)."""

    def __init__(self, run_id: str, reason: str) -> None:
        super().__init__("run_cancelled", f"run {run_id} was cancelled ({reason})")
        self.run_id = run_id
        self.reason = reason


class AgentClosingError(GafferSdkError):
    def __init__(self) -> None:
        super().__init__("closing", "the agent is shutting down")


# ---- Outcomes raised by handlers ----


class OutcomeError(Exception):
    """Base of the outcome errors; ``output`` (any JSON) is reported with the outcome."""

    error_class: str = "fatal"
    report_status: str = "failed"

    def __init__(self, message: str = "", *, output: Any = None) -> None:
        super().__init__(message)
        self.output = output


class RetryableError(OutcomeError):
    """Transient (timeout, rate limit, a dependency down): retry later."""

    error_class = "retryable"
    report_status = "backlog"


class FatalError(OutcomeError):
    """Will not succeed by retrying (validation failed, condition not met): hold for review."""

    error_class = "fatal"
    report_status = "failed"


class NeedsHumanError(OutcomeError):
    """Money, accounts, security: stop and ask a human; never retried automatically."""

    error_class = "needs_human"
    report_status = "blocked"


class BlockedError(NeedsHumanError):
    """Task outcome: blocked (waiting on something outside)."""


class BacklogError(RetryableError):
    """Task outcome: give the task back to the backlog for another attempt."""


class TaskFailedError(FatalError):
    """Task outcome: failed."""


def error_class_of(e: BaseException, fallback: str) -> str:
    c = getattr(e, "error_class", None)
    return c if isinstance(c, str) and c in ERROR_CLASSES else fallback


def report_status_of(e: BaseException) -> str:
    s = getattr(e, "report_status", None)
    if s in ("failed", "blocked", "backlog"):
        return s  # type: ignore[return-value]
    return {"retryable": "backlog", "needs_human": "blocked"}.get(error_class_of(e, "fatal"), "failed")


_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(text: str) -> bool:
    """True when ``text`` holds a surrogate code point (``"\\udc80"``: from ``surrogateescape``, a
    JSON escape, a cut elsewhere). UTF-8 cannot carry one, so Gaffer cannot store it."""
    return _SURROGATE.search(text) is not None


def well_formed(text: str) -> str:
    """``text`` with each surrogate code point replaced by U+FFFD (what a UTF-8 decoder shows)."""
    return _SURROGATE.sub("\ufffd", text) if has_lone_surrogate(text) else text


def error_message(e: BaseException, limit: int = 10_000) -> str:
    """A short, single message for the wire (notes and run errors are capped by the protocol).
    Python cuts on code points, so a cut never halves a character; a surrogate in the message
    itself (an undecodable file name, say) becomes U+FFFD, so the report is never refused for it."""
    text = well_formed(str(e) or type(e).__name__)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def output_of(e: BaseException) -> Optional[Any]:
    return getattr(e, "output", None)
