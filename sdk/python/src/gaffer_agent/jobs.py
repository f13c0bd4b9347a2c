"""Job runs and prechecks for one agent (the agent.py invariants 3 and 6, for jobs).

A ``job_trigger`` is acknowledged (``run_started``) before the handler runs; each ``ctx.step`` is
recorded before it returns; the result (``run_result``) is sent once, after the log lines and usage
— unless Gaffer cancelled the run (``run_cancelled``), after which nothing more is sent. At the
deadline the handler is cancelled and the run reported ``failed``/``retryable``. Checkpoints and
results lost to a connection blip, or refused as ``rate_limited`` / ``unavailable``, are sent
again (retry.py).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable, Dict, List, Optional, Union

from .contexts import JobContext, Signal, call_handler
from .errors import AgentClosingError, ConnectionLostError, GafferSdkError, RunCancelledError, error_class_of, error_message, output_of
from .models import JobTrigger, PrecheckAnswer, PrecheckRequest
from .ports import AgentHandle
from .retry import paused_after_refusal
from .telemetry import Telemetry

log = logging.getLogger("gaffer_agent")

JobHandler = Callable[[JobContext], Awaitable[Any]]
PrecheckResult = Union[bool, PrecheckAnswer, Dict[str, Any], "tuple[Any, ...]"]
PrecheckHandler = Callable[[PrecheckRequest], Union[PrecheckResult, Awaitable[PrecheckResult]]]
Request = Callable[..., Awaitable[Any]]


class _Run:
    def __init__(self, attempt: int) -> None:
        self.attempt = attempt
        self.signal = Signal()
        self.handler: Optional["asyncio.Task[Any]"] = None
        self.done = asyncio.Event()


class Jobs:
    def __init__(self, agent: AgentHandle, request: Request, emit: Callable[[str, Dict[str, Any]], None], stop: asyncio.Event, flush_every: float) -> None:
        self._agent = agent
        self._request = request
        self._emit = emit
        self._stop = stop
        self._flush_every = flush_every
        self._runs: Dict[str, _Run] = {}
        self._prechecks: Dict[str, PrecheckHandler] = {}
        self._job: Optional["tuple[JobHandler, str]"] = None

    def on_job(self, handler: JobHandler, default_error_class: str) -> Callable[[], None]:
        entry = (handler, default_error_class)
        self._job = entry

        def off() -> None:
            if self._job is entry:
                self._job = None

        return off

    def on_precheck(self, name: str, handler: PrecheckHandler) -> Callable[[], None]:
        self._prechecks[name] = handler

        def off() -> None:
            if self._prechecks.get(name) is handler:
                del self._prechecks[name]

        return off

    def running(self) -> List[asyncio.Event]:
        """The ``done`` events of the runs in progress (close waits for them)."""
        return [r.done for r in self._runs.values()]

    def abort_all(self, reason: BaseException) -> None:
        for r in list(self._runs.values()):
            r.signal.abort(reason)
            if r.handler is not None:
                r.handler.cancel()

    def cancel(self, run_id: str, reason: str) -> None:
        """A ``run_cancelled`` push: the handler is cancelled and nothing more is sent for the run."""
        run = self._runs.get(run_id)
        if run is not None:
            log.warning("run %s cancelled by Gaffer (%s)", run_id, reason)
            run.signal.abort(RunCancelledError(run_id, reason))
            if run.handler is not None:
                run.handler.cancel()

    async def _persistent(self, type_: str, fields: Dict[str, Any]) -> Any:
        """A request repeated across connection blips and "try later" refusals (checkpoints and results)."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self._request(type_, fields)
            except ConnectionLostError:
                if attempt >= 5:
                    raise
            except GafferSdkError as e:
                if not await paused_after_refusal(e, attempt):
                    raise

    async def run(self, trigger: JobTrigger) -> None:
        job = self._job
        if job is None:
            # Not acknowledging lets the hub offer the run to another instance.
            log.warning("job_trigger for run %s but no on_job handler is registered", trigger.run_id)
            return
        previous = self._runs.get(trigger.run_id)
        if previous is not None:
            # A re-offer of the attempt running here is a duplicate. A later attempt (an approved
            # held run, a retry) can arrive while the earlier one is still finishing here (its
            # result committed, the reply not yet read) and must not be dropped: it starts after.
            if trigger.attempt <= previous.attempt:
                return
            await previous.done.wait()
            if trigger.run_id in self._runs:
                return
        if self._stop.is_set():
            return
        handler, default_class = job
        run_id = trigger.run_id
        run = _Run(trigger.attempt)
        self._runs[run_id] = run
        deadline_timer: Optional[asyncio.TimerHandle] = None
        telemetry: Optional[Telemetry] = None
        try:
            try:
                await self._request("run_started", {"runId": run_id})
            except GafferSdkError as e:
                log.warning("run %s not started: %s", run_id, e)
                return
            self._emit("job.started", {"run_id": run_id, "slot": trigger.slot})
            deadline_timer = self._deadline_timer(run, trigger)
            telemetry = Telemetry(self._request, {"runId": run_id}, flush_every=self._flush_every)

            async def checkpoint(step: str, ref: Optional[str]) -> None:
                await self._persistent("run_step", {"runId": run_id, "step": step, **({"ref": ref} if ref is not None else {})})

            ctx = JobContext(trigger, run.signal, telemetry, checkpoint, lambda step, skipped: self._emit("job.step", {"run_id": run_id, "step": step, "skipped": skipped}), self._agent)
            run.handler = asyncio.ensure_future(call_handler(handler, ctx))
            result: Dict[str, Any]
            try:
                output = await asyncio.shield(run.handler)
                result = {"outcome": "success", **({"output": output} if output is not None else {})}
            except asyncio.CancelledError:
                if not run.handler.cancelled():
                    raise
                if isinstance(run.signal.reason, RunCancelledError):
                    return  # invariant 3: the run was taken away; anything more is refused
                result = {"outcome": "failed", "errorClass": "retryable", "error": error_message(run.signal.reason or AgentClosingError())}
            except Exception as e:
                result = {"outcome": "failed", "errorClass": error_class_of(e, default_class), "error": error_message(e)}
                if output_of(e) is not None:
                    result["output"] = output_of(e)
                log.warning("run %s handler failed (%s): %s", run_id, result["errorClass"], result["error"])
            await telemetry.close()
            try:
                await self._persistent("run_result", {"runId": run_id, **result})
                self._emit("job.finished", {"run_id": run_id, "outcome": result["outcome"], "error_class": result.get("errorClass")})
            except GafferSdkError as e:
                log.error("run %s: run_result failed: %s", run_id, e)
        finally:
            if deadline_timer is not None:
                deadline_timer.cancel()
            if telemetry is not None:
                telemetry.stop("the run finished")
            self._runs.pop(run_id, None)
            run.done.set()

    def _deadline_timer(self, run: _Run, trigger: JobTrigger) -> Optional[asyncio.TimerHandle]:
        try:
            deadline = datetime.fromisoformat(trigger.deadline.replace("Z", "+00:00"))
        except ValueError:
            return None
        delay = max(0.0, (deadline - datetime.now(timezone.utc)).total_seconds())

        def expire() -> None:
            run.signal.abort(TimeoutError(f"deadline {trigger.deadline} passed"))
            if run.handler is not None:
                run.handler.cancel()

        return asyncio.get_running_loop().call_later(min(delay, 2**31 / 1000), expire)

    async def answer_precheck(self, p: PrecheckRequest) -> None:
        fn = self._prechecks.get(p.check)
        answer: PrecheckAnswer
        if fn is None:
            answer = PrecheckAnswer(ready=False, reason=f'this agent has no precheck named "{p.check}"')
        else:
            try:
                answer = _precheck_answer(await call_handler(fn, p))
            except Exception as e:
                answer = PrecheckAnswer(ready=False, reason=f"precheck failed: {error_message(e, 1900)}")
        fields: Dict[str, Any] = {"requestId": p.request_id, "ready": answer.ready is True}
        if answer.reason is not None:
            fields["reason"] = error_message(Exception(answer.reason), 2000)
        if answer.evidence is not None:
            fields["evidence"] = answer.evidence
        try:
            await self._request("precheck_result", fields)
        except GafferSdkError as e:
            log.warning("precheck_result for %s failed: %s", p.request_id, e)


def _precheck_answer(r: Any) -> PrecheckAnswer:
    if isinstance(r, PrecheckAnswer):
        return r
    if isinstance(r, bool):
        return PrecheckAnswer(ready=r)
    if isinstance(r, tuple):
        ready, reason, evidence = (tuple(r) + (None, None))[:3]
        return PrecheckAnswer(ready=bool(ready), reason=reason, evidence=evidence)
    if isinstance(r, dict):
        return PrecheckAnswer(ready=bool(r.get("ready")), reason=r.get("reason"), evidence=r.get("evidence"))
    raise TypeError(f"a precheck handler returns a bool, a PrecheckAnswer, a dict or a tuple, not {type(r).__name__}")
