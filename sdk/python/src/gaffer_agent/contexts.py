"""What handlers receive: ``WorkTask`` (tasks), ``JobContext`` (job runs), and their ``Signal``."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Awaitable, Callable, List, Optional, Set, Union

from .models import Approval, JobTrigger, Task
from .ports import AgentHandle
from .telemetry import Telemetry


async def call_handler(fn: Callable[..., Any], *args: Any) -> Any:
    """Calls a handler that may be sync or async."""
    value = fn(*args)
    if inspect.isawaitable(value):
        value = await value
    return value


class Signal:
    """Set when the work must stop: the lock was lost, the run was cancelled or passed its
    deadline, or the agent is closing. The handler is also cancelled (``asyncio.CancelledError``);
    the signal tells it why (``reason``) and lets code that is not awaiting notice (``aborted``)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.reason: Optional[BaseException] = None

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    async def wait(self) -> Optional[BaseException]:
        await self._event.wait()
        return self.reason

    def abort(self, reason: BaseException) -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()


class _Telemetered:
    """``log`` and ``usage`` for the task or run a handler works on (batched, PROTOCOL §5)."""

    _telemetry: Telemetry

    def log(self, text: str, *, level: str = "info", stream: str = "agent") -> "asyncio.Future[None]":
        """A log line of this attempt (numbered and sent in batches, resent until Gaffer has it; the
        operator reads it beside the task or run). Returns a future: ``await`` it to log at the pace
        Gaffer takes lines (it is done at once unless 20 000 lines wait); without awaiting, lines
        logged far faster than they can be sent are dropped past 100 000 waiting (counted)."""
        return self._telemetry.log(text, level=level, stream=stream)

    def usage(self, *, input_tokens: Optional[int] = None, output_tokens: Optional[int] = None, cost_usd: Optional[float] = None, model: Optional[str] = None) -> None:
        """Adds model usage (increments; summed by Gaffer, which may stop work past its budget)."""
        self._telemetry.usage(input_tokens=input_tokens, output_tokens=output_tokens, cost_usd=cost_usd, model=model)


class WorkTask(_Telemetered):
    """A claimed task, as a ``work`` handler gets it. ``id``, ``title``, ``payload``, ``attempt``,
    ``previously_expired`` and ``previous_error`` (why the last attempt did not count) as on the task; ``fence`` and ``expires_at`` of the current lock
    (``expires_at`` moves with each renewal); ``signal``; ``log`` / ``usage`` (batched)."""

    def __init__(self, task: Task, fence: int, expires_at: str, signal: Signal, telemetry: Telemetry, agent: AgentHandle) -> None:
        self.task = task
        self.id: int = task.id
        self.title: str = task.title
        self.role: str = task.role
        self.priority: int = task.priority
        self.payload: Any = task.payload
        self.attempt: int = task.attempt
        self.previously_expired: bool = task.previously_expired
        self.previous_error: Optional[str] = task.previous_error
        self.trace_id: Optional[str] = task.trace_id
        self.fence = fence
        self.expires_at = expires_at
        self.signal = signal
        self.agent = agent
        self._telemetry = telemetry

    def __repr__(self) -> str:
        return f"WorkTask(id={self.id}, title={self.title!r}, attempt={self.attempt}, fence={self.fence})"


StepFn = Callable[[], Union[Any, Awaitable[Any]]]


class JobContext(_Telemetered):
    """A job run, as an ``on_job`` handler gets it: every field of the ``job_trigger`` push
    (snake_case: ``run_id``, ``job``, ``slot``, ``attempt``, ``payload``, ``idempotency_key`` — pass it
    to every outside system you change —, ``deadline``, ``completed_steps``, ``version``,
    ``trace_id``, ``slot_at``, ``trigger``, ``backfill_id``, ``covers``, ``previous_error``,
    ``approval``), ``signal``, and ``step`` / ``log`` / ``usage``."""

    def __init__(
        self,
        trigger: JobTrigger,
        signal: Signal,
        telemetry: Telemetry,
        checkpoint: Callable[[str, Optional[str]], Awaitable[None]],
        on_step: Callable[[str, bool], None],
        agent: AgentHandle,
    ) -> None:
        self.trigger_push = trigger
        t = trigger
        self.run_id: str = t.run_id
        self.job_id: str = t.job_id
        self.job: str = t.job
        self.slot: str = t.slot
        self.attempt: int = t.attempt
        self.payload: Any = t.payload
        self.idempotency_key: str = t.idempotency_key
        self.deadline: str = t.deadline
        self.version: int = t.version
        self.trace_id: str = t.trace_id
        self.slot_at: Optional[str] = t.slot_at
        self.trigger: Optional[str] = t.trigger
        self.backfill_id: Optional[int] = t.backfill_id
        self.covers: List[str] = list(t.covers)
        self.previous_error: Optional[str] = t.previous_error
        self.signal = signal
        self.agent = agent
        self._telemetry = telemetry
        self._checkpoint = checkpoint
        self._on_step = on_step
        self._completed: Set[str] = set(t.completed_steps)

    @property
    def approval(self) -> Optional[Approval]:
        """Set when the operator approved this held run (PROTOCOL §8): decision, note, by, at."""
        return self.trigger_push.approval

    @property
    def completed_steps(self) -> List[str]:
        """Steps done by an earlier attempt or by this one (their side effects happened)."""
        return sorted(self._completed)

    async def step(self, name: str, fn: StepFn, *, ref: Union[None, str, Callable[[Any], Optional[str]]] = None) -> Any:
        """Runs ``fn`` (sync or async) as checkpointed step ``name``, unless a previous attempt
        completed it — then ``fn`` is not called and the result is None. After ``fn`` succeeds the
        checkpoint (``run_step``, with ``ref`` naming the side effect) is acknowledged before this
        returns, so a retry skips the step."""
        if name in self._completed:
            self._on_step(name, True)
            return None
        value = fn()
        if inspect.isawaitable(value):
            value = await value
        ref_value = ref(value) if callable(ref) else ref
        await self._checkpoint(name, ref_value)
        self._completed.add(name)
        self._on_step(name, False)
        return value

    def __repr__(self) -> str:
        return f"JobContext(run_id={self.run_id!r}, job={self.job!r}, slot={self.slot!r}, attempt={self.attempt})"
