"""Gaffer agent SDK for Python (asyncio) — the same shape as the TypeScript SDK.

::

    import gaffer_agent

    async with gaffer_agent.connect(url, token=token, role="py", name="py-1") as agent:
        async def handle(task):            # task.id, .title, .payload, .attempt, .previously_expired, .signal
            return {"ok": True}            # → reported done; the dict becomes the task's output
        await agent.work(handle, max_tasks=None)

Raise ``RetryableError`` → ``backlog`` (another attempt), ``BlockedError`` → ``blocked``,
``FatalError`` or any other exception → ``failed``. ``agent.on_job(handler)`` receives job runs
(``ctx.step``, ``ctx.log``, ``ctx.usage``, ``ctx.approval``), ``agent.on_precheck(name, fn)``
answers prechecks. One dependency: ``websockets`` (>= 10.4).
"""

from .agent import Agent, connect, renew_interval
from .connection import ReconnectPolicy, agent_url, backoff_delay
from .contexts import JobContext, Signal, WorkTask
from .errors import (
    AgentClosedError,
    AgentClosingError,
    BacklogError,
    BlockedError,
    ConnectionLostError,
    FatalError,
    GafferRequestError,
    GafferSdkError,
    LockLostError,
    NeedsHumanError,
    OutcomeError,
    RequestTimeoutError,
    RetryableError,
    RunCancelledError,
    TaskFailedError,
)
from .models import Approval, ClaimedTask, HeldLock, HelloResult, JobTrigger, Lock, PrecheckAnswer, PrecheckRequest, Result, Task
from .ports import AgentHandle
from .token import token_from_environment

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentClosedError",
    "AgentClosingError",
    "AgentHandle",
    "Approval",
    "BacklogError",
    "BlockedError",
    "ClaimedTask",
    "ConnectionLostError",
    "FatalError",
    "GafferRequestError",
    "GafferSdkError",
    "HeldLock",
    "HelloResult",
    "JobContext",
    "JobTrigger",
    "Lock",
    "LockLostError",
    "NeedsHumanError",
    "OutcomeError",
    "PrecheckAnswer",
    "PrecheckRequest",
    "ReconnectPolicy",
    "RequestTimeoutError",
    "Result",
    "RetryableError",
    "RunCancelledError",
    "Signal",
    "Task",
    "TaskFailedError",
    "WorkTask",
    "agent_url",
    "backoff_delay",
    "connect",
    "renew_interval",
    "token_from_environment",
]
