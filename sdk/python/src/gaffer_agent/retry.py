"""Requests Gaffer refused without doing them, sent again (the TypeScript SDK's ``RETRY_LATER``).

``rate_limited`` (this agent sends faster than its token bucket allows, or the log writer is
behind) and ``unavailable`` (storage busy, Gaffer stopping) mean nothing happened: a report, a
checkpoint, a run result or usage refused so is worth sending again after a pause that grows
(0.1 s, doubling, at most 5 s; 20 tries), so a fast agent never abandons a report and leaves its
lock held for the whole lock window. A refused claim waits at least ``CLAIM_PAUSE`` before the next.
"""

from __future__ import annotations

import asyncio

from .errors import GafferRequestError

RETRY_LATER = frozenset({"rate_limited", "unavailable"})
MAX_TRIES = 20
CLAIM_PAUSE = 1.0
"""Seconds at least between a claim refused as ``rate_limited``/``unavailable`` and the next:
retrying at once would keep the token bucket empty."""


def refusal_pause(attempt: int) -> float:
    """The pause after the ``attempt``-th refusal in a row (1-based), seconds."""
    return min(5.0, 0.1 * 2 ** min(attempt - 1, 10))


def resend_pause(failures: int) -> float:
    """The pause before resending a log frame after ``failures`` failures in a row, seconds."""
    return min(2.0, 0.05 * 2 ** min(failures, 6))


async def _sleep(seconds: float) -> None:
    """The one place these pauses sleep (tests record them instead of waiting)."""
    await asyncio.sleep(seconds)


async def paused_after_refusal(e: BaseException, attempt: int) -> bool:
    """When ``e`` says "not done, try later" and tries remain: pauses, then True (send again)."""
    if not isinstance(e, GafferRequestError) or e.code not in RETRY_LATER or attempt >= MAX_TRIES:
        return False
    await _sleep(refusal_pause(attempt))
    return True
