"""The Gaffer agent: ``connect()`` returns an ``Agent`` that speaks docs/protocol.md.

Invariants (the TypeScript SDK's ``agent.ts``, in asyncio terms):

1. P1/P5: a task is worked only while this agent holds its lock. The lock is renewed about every
   lockWindow/4 (at most every 30 min) while the handler runs; when a renewal is refused
   (``not_holder``/``not_found``), a ``lock_lost`` push arrives, or a reconnect shows the lock is
   gone, the handler is cancelled (its ``signal`` says why) and nothing is reported for it.
2. A task is released only through a report: ``done`` when the handler returns (a returned dict
   is the output), otherwise the status its exception maps to (errors.py). Reports lost to a
   connection blip are repeated (a repeat is harmless); so are reports refused as
   ``rate_limited`` or ``unavailable`` (nothing happened: sent again after a growing pause,
   retry.py), so a fast agent never abandons a report and leaves its lock held. A claim refused
   so waits at least a second before the next.
7. A task's log lines and usage (telemetry.py) are all sent before its report; when the lock is
   lost they are discarded (Gaffer would refuse them).
3. Jobs: ``run_started`` is acknowledged before the handler runs (an unacknowledged trigger goes to
   another instance); ``ctx.step`` skips steps listed in ``completedSteps`` and records each
   finished step with ``run_step`` before the handler continues. A ``run_cancelled`` push cancels
   the handler and nothing more is sent for the run.
4. After a reconnect that resumed the instance, locks the server still lists but nobody here works
   on (a claim whose reply was lost in the blip) are handed back at once (``backlog``).
5. ``close()`` stops claiming, lets running handlers finish within a timeout, then cancels them
   (tasks go back to the backlog, runs fail ``retryable``), and closes the socket.
6. A push is parsed strictly (models.py) before a handler sees it; a malformed or unknown push is
   logged and ignored.

Job runs and prechecks live in jobs.py; the agent routes pushes to it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable, Dict, List, Optional

from .connection import Connection
from .contexts import Signal, WorkTask, call_handler
from .errors import (
    AgentClosedError,
    AgentClosingError,
    ConnectionLostError,
    GafferRequestError,
    GafferSdkError,
    LockLostError,
    error_message,
    output_of,
    report_status_of,
)
from .jobs import JobHandler, Jobs, PrecheckHandler
from .models import ClaimedTask, HelloResult, JobTrigger, Lock, PrecheckRequest, Result, Task
from .retry import CLAIM_PAUSE, RETRY_LATER, paused_after_refusal
from .telemetry import Telemetry

log = logging.getLogger("gaffer_agent")

WorkHandler = Callable[[WorkTask], Awaitable[Any]]
Listener = Callable[[Dict[str, Any]], None]

LOCK_GONE = {"not_holder", "not_found"}
THIRTY_MIN = 30 * 60.0


def renew_interval(lock_window_s: float) -> float:
    """PROTOCOL P4: renew about every lockWindow/4, and at most every 30 min (seconds)."""
    return max(0.001, min(lock_window_s / 4, THIRTY_MIN))


class _Active:
    """A task being worked (invariant 1)."""

    def __init__(self, claimed: ClaimedTask, telemetry: Telemetry) -> None:
        self.task_id = claimed.task.id
        self.fence = claimed.lock.fence
        self.signal = Signal()
        self.lost = False
        self.handler: Optional["asyncio.Task[Any]"] = None
        self.done = asyncio.Event()
        self.telemetry = telemetry


class Agent:
    """Use ``connect()``. Every public coroutine raises a ``GafferSdkError`` subclass on failure."""

    def __init__(self, url: str, *, token: str, role: str, name: str, telemetry_flush_every: float = 0.05, **connection: Any) -> None:
        """``connection``: the Connection's options (``version``, ``request_timeout``,
        ``connect_timeout``, ``reconnect``, ``heartbeat_interval``, ``random``)."""
        self._conn = Connection(
            url,
            token=token,
            role=role,
            name=name,
            on_ready=self._on_ready,
            on_down=lambda code, reason: self._emit("disconnected", {"code": code, "reason": reason}),
            on_reconnecting=lambda attempt, delay: self._emit("reconnecting", {"attempt": attempt, "delay": delay}),
            on_push=self._on_push,
            on_closed=self._on_closed,
            **connection,
        )
        self._listeners: Dict[str, List[Listener]] = {}
        self._active: Dict[int, _Active] = {}
        self._stop = asyncio.Event()
        self._closing: Optional["asyncio.Task[None]"] = None
        self._previous_instance: Optional[str] = None
        self._background: set["asyncio.Task[Any]"] = set()
        self._flush_every = telemetry_flush_every
        self._jobs = Jobs(self, self._conn.request, self._emit, self._stop, telemetry_flush_every)

    # ---- connection ----

    async def start(self) -> "Agent":
        """Opens the connection and says hello."""
        await self._conn.open()
        return self

    async def __aenter__(self) -> "Agent":
        return self if self._conn.state != "idle" else await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def instance_id(self) -> str:
        return self._conn.instance_id or ""

    @property
    def role(self) -> str:
        return self._conn.role

    @property
    def lock_window_s(self) -> float:
        return self._conn.hello.lock_window_s if self._conn.hello else 7200.0

    @property
    def connected(self) -> bool:
        return self._conn.state == "ready"

    @property
    def closed(self) -> bool:
        return self._conn.state == "closed"

    @property
    def hello(self) -> Optional[HelloResult]:
        return self._conn.hello

    def on(self, event: str, fn: Listener) -> Callable[[], None]:
        """Listens to ``ready``, ``disconnected``, ``reconnecting``, ``closed``, ``task.claimed``,
        ``task.renewed``, ``task.reported``, ``task.lost``, ``job.started``, ``job.step``,
        ``job.finished`` (each gets one dict). Returns a function that stops listening."""
        self._listeners.setdefault(event, []).append(fn)
        return lambda: self._listeners.get(event, []).remove(fn) if fn in self._listeners.get(event, []) else None

    def _emit(self, event: str, data: Dict[str, Any]) -> None:
        for fn in list(self._listeners.get(event, [])):
            try:
                fn(data)
            except Exception:
                log.exception("event listener for %s failed", event)

    def _spawn(self, coro: Awaitable[Any]) -> "asyncio.Task[Any]":
        t = asyncio.ensure_future(coro)
        self._background.add(t)
        t.add_done_callback(self._background.discard)
        return t

    # ---- plain requests ----

    async def request(self, type_: str, **fields: Any) -> Any:
        """Sends any request of the protocol and returns its ``result`` (for frames without a helper)."""
        return await self._conn.request(type_, fields)

    async def claim(self, role: Optional[str] = None) -> Optional[ClaimedTask]:
        """Claims the best claimable task of the role, or None (P2: never waits for one)."""
        r = await self._conn.request("claim", {"role": role} if role else {})
        return self._claimed(r)

    def _claimed(self, r: Any) -> Optional[ClaimedTask]:
        if not isinstance(r, dict) or r.get("task") is None:
            return None
        try:
            claimed = ClaimedTask(task=Task.from_wire(r["task"]), lock=Lock.from_wire(r.get("lock") or {}))
        except ValueError as e:
            raise GafferSdkError("protocol", f"malformed claim reply: {e}") from None
        self._emit("task.claimed", {"task": claimed.task, "fence": claimed.lock.fence})
        return claimed

    async def renew(self, task_id: int, fence: int) -> str:
        """Renews a lock; returns the new ``expiresAt``."""
        r = await self._conn.request("renew", {"taskId": task_id, "fence": fence})
        return str(r.get("expiresAt", "")) if isinstance(r, dict) else ""

    async def report(self, task_id: int, fence: int, status: str, *, note: Optional[str] = None, output: Any = None, claim_next: bool = False) -> Dict[str, Any]:
        """Reports a task (P5: releases the lock). Returns the result (``task``, ``replayed``; with
        ``claim_next`` and a Gaffer that supports it (PROTOCOL §10), ``next``)."""
        fields: Dict[str, Any] = {"taskId": task_id, "fence": fence, "status": status}
        if note is not None:
            fields["note"] = note
        if output is not None:
            fields["output"] = output
        if claim_next:
            fields["claimNext"] = True
        r = await self._conn.request("report", fields)
        self._emit("task.reported", {"task_id": task_id, "status": status})
        return r if isinstance(r, dict) else {}

    async def create_task(
        self,
        title: str,
        *,
        role: Optional[str] = None,
        priority: Optional[int] = None,
        payload: Any = None,
        depends_on: Optional[List[int]] = None,
        budget: Optional[Dict[str, float]] = None,
        idempotency_key: Optional[str] = None,
    ) -> tuple[Task, bool]:
        """Creates a task (default: this agent's role); returns ``(task, replayed)``.

        ``budget`` (``{"maxCostUsdPerRun": …, "maxTokensPerRun": …}``) caps each attempt: past it
        the holder gets ``lock_lost`` (reason ``budget``) and the task is blocked for the operator.
        """
        fields: Dict[str, Any] = {"title": title, "role": role or self.role}
        for key, value in (("priority", priority), ("payload", payload), ("dependsOn", depends_on), ("budget", budget), ("idempotencyKey", idempotency_key)):
            if value is not None:
                fields[key] = value
        r = await self._conn.request("create_task", fields)
        try:
            return Task.from_wire(r["task"]), bool(r.get("replayed", False))
        except (ValueError, KeyError, TypeError) as e:
            raise GafferSdkError("protocol", f"malformed create_task reply: {e}") from None

    async def heartbeat(self) -> str:
        r = await self._conn.request("heartbeat")
        return str(r.get("serverTime", "")) if isinstance(r, dict) else ""

    # ---- the work loop ----

    async def work(
        self,
        handler: WorkHandler,
        *,
        max_tasks: Optional[int] = None,
        idle_delay: float = 5.0,
        renew_every: Optional[float] = None,
        role: Optional[str] = None,
        claim_next: bool = True,
    ) -> int:
        """Claims and works tasks, one at a time, until ``close()`` or ``max_tasks`` claims; returns
        how many were worked. Call it N times concurrently for N in parallel. With ``claim_next``
        (the default) each report also claims the next task in the same round trip where Gaffer
        supports it (PROTOCOL §10), else it claims as usual; a replayed report never claims."""
        done = 0
        handed: Optional[ClaimedTask] = None
        while not self._stop.is_set() and (max_tasks is None or done < max_tasks):
            claimed = handed
            handed = None
            if claimed is None:
                try:
                    claimed = await self.claim(role)
                except AgentClosedError:
                    break
                except GafferSdkError as e:
                    if self._stop.is_set():
                        break
                    # A lost reply is not retried blindly: if the claim landed, the reconnect
                    # reconciliation hands that lock back (invariant 4).
                    log.warning("claim failed: %s", e)
                    if isinstance(e, ConnectionLostError):
                        pause = min(idle_delay, 0.25)
                    elif isinstance(e, GafferRequestError) and e.code in RETRY_LATER:
                        pause = max(idle_delay, CLAIM_PAUSE)  # asked to slow down: retrying at once keeps the bucket empty
                    else:
                        pause = idle_delay
                    await self._sleep(pause)
                    continue
            if claimed is None:
                await self._sleep(idle_delay)
                continue
            if self._stop.is_set():
                await self._safe_report(claimed.task.id, claimed.lock.fence, "backlog", note="agent shutting down before starting")
                break
            more = claim_next and (max_tasks is None or done + 1 < max_tasks)
            handed = await self._run_task(claimed, handler, renew_every, claim_next=more)
            done += 1
        if handed is not None:  # claimed by the last report but not wanted (closing): give it back
            await self._safe_report(handed.task.id, handed.lock.fence, "backlog", note="agent shutting down before starting")
        return done

    async def work_one(self, handler: WorkHandler, *, renew_every: Optional[float] = None, role: Optional[str] = None) -> bool:
        """Claims once and, when that found a task, works it like ``work()``. Returns True after a
        task was worked, False when there was none (P2); a refused claim raises."""
        claimed = await self.claim(role)
        if claimed is None:
            return False
        if self._stop.is_set():
            await self._safe_report(claimed.task.id, claimed.lock.fence, "backlog", note="agent shutting down before starting")
            return False
        await self._run_task(claimed, handler, renew_every)
        return True

    async def _sleep(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self._stop.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def _run_task(self, claimed: ClaimedTask, handler: WorkHandler, renew_every: Optional[float], claim_next: bool = False) -> Optional[ClaimedTask]:
        task = claimed.task
        telemetry = Telemetry(self._conn.request, {"taskId": task.id, "fence": claimed.lock.fence}, flush_every=self._flush_every)
        t = _Active(claimed, telemetry)
        self._active[task.id] = t
        ctx = WorkTask(task, claimed.lock.fence, claimed.lock.expires_at, t.signal, telemetry, self)
        every = renew_every if renew_every is not None else renew_interval(self.lock_window_s)
        renewer = asyncio.ensure_future(self._renew_loop(t, ctx, every))
        status, note, output = "done", None, None
        t.handler = asyncio.ensure_future(call_handler(handler, ctx))
        try:
            result = await asyncio.shield(t.handler)
            if isinstance(result, Result):
                output, note = result.output, result.note
            else:
                output = result
        except asyncio.CancelledError:
            if not t.handler.cancelled():
                raise  # this coroutine itself is being cancelled
            status, note = "backlog", error_message(t.signal.reason or AgentClosingError())
        except Exception as e:
            status = "backlog" if isinstance(t.signal.reason, AgentClosingError) else report_status_of(e)
            note, output = error_message(e), output_of(e)
            log.warning("task %s handler failed (%s): %s", task.id, status, note)
        finally:
            renewer.cancel()
        handed: Optional[ClaimedTask] = None
        try:
            await telemetry.close()  # the lines go in while the lock is still ours (invariant 7)
            if t.lost:
                log.warning("task %s: not reporting, the lock was lost", task.id)
            else:
                # Decided now, not when the task started: a closing agent asks for nothing more.
                more = claim_next and not self._stop.is_set()
                handed = await self._safe_report(task.id, t.fence, status, note=note, output=output, claim_next=more)
        finally:
            telemetry.stop("the task was reported")
            self._active.pop(task.id, None)
            t.done.set()
        return handed

    async def _renew_loop(self, t: _Active, ctx: WorkTask, every: float) -> None:
        delay = every
        while not t.lost:
            await asyncio.sleep(delay)
            try:
                ctx.expires_at = await self.renew(t.task_id, t.fence)
                self._emit("task.renewed", {"task_id": t.task_id, "expires_at": ctx.expires_at})
                delay = every
            except GafferRequestError as e:
                if e.code in LOCK_GONE:
                    self._lose(t, f"renew refused: {e.message}")
                    return
                log.warning("task %s: renew refused (%s); retrying", t.task_id, e)
                delay = min(every, 1.0)
            except AgentClosedError:
                return
            except GafferSdkError as e:  # a blip or a timeout: try again soon (it waits for the reconnect)
                log.warning("task %s: renew failed (%s); retrying", t.task_id, e)
                delay = min(every, 1.0)

    async def _safe_report(self, task_id: int, fence: int, status: str, *, note: Optional[str] = None, output: Any = None, claim_next: bool = False) -> Optional[ClaimedTask]:
        """Reports, repeating after a connection blip and after a refusal that means "later"
        (invariant 2); returns the next task when ``claim_next`` got one."""
        attempt = 0
        while True:
            attempt += 1
            try:
                r = await self.report(task_id, fence, status, note=note, output=output, claim_next=claim_next)
            except ConnectionLostError:
                if attempt < 5:
                    continue
                log.error("task %s: report lost to the connection %d times", task_id, attempt)
                return None
            except GafferRequestError as e:
                if await paused_after_refusal(e, attempt):
                    continue
                if e.code in LOCK_GONE:
                    log.warning("task %s: report refused, the lock is no longer ours: %s", task_id, e.message)
                    active = self._active.get(task_id)
                    if active is not None:
                        self._lose(active, e.message)
                else:
                    log.error("task %s: report %s failed: %s", task_id, status, e)
                return None
            except GafferSdkError as e:
                log.error("task %s: report %s failed: %s", task_id, status, e)
                return None
            nxt = r.get("next")
            if claim_next and isinstance(nxt, dict):
                return self._claimed(nxt)
            return None

    def _lose(self, t: _Active, reason: str, lost_because: Optional[str] = None) -> None:
        if t.lost:
            return
        t.lost = True
        t.telemetry.stop(f"lock lost: {reason}")
        log.warning("task %s: lock lost (%s)", t.task_id, reason)
        self._emit("task.lost", {"task_id": t.task_id, "reason": reason})
        t.signal.abort(LockLostError(t.task_id, reason, lost_because))
        if t.handler is not None:
            t.handler.cancel()

    # ---- jobs and prechecks (jobs.py) ----

    def on_job(self, handler: JobHandler, *, default_error_class: str = "retryable") -> Callable[[], None]:
        """Handles ``job_trigger`` pushes; the handler's return value is the run's output. Returns
        a function that unregisters it. ``default_error_class``: for exceptions that are none of
        RetryableError / FatalError / NeedsHumanError."""
        return self._jobs.on_job(handler, default_error_class)

    def on_precheck(self, name: str, handler: PrecheckHandler) -> Callable[[], None]:
        """Answers ``precheck`` pushes for check ``name``: return a bool, a PrecheckAnswer, a dict
        ``{ready, reason?, evidence?}`` or a tuple ``(ready, reason, evidence)``."""
        return self._jobs.on_precheck(name, handler)

    def _on_push(self, msg: Dict[str, Any]) -> None:
        kind = msg.get("type")
        try:
            if kind == "job_trigger":
                self._spawn(self._jobs.run(JobTrigger.from_wire(msg)))
            elif kind == "precheck":
                self._spawn(self._jobs.answer_precheck(PrecheckRequest.from_wire(msg)))
            elif kind == "lock_lost":
                task_id, fence, reason = msg.get("taskId"), msg.get("fence"), msg.get("reason")
                if not isinstance(task_id, int) or not isinstance(fence, int) or not isinstance(reason, str):
                    raise ValueError("lock_lost: taskId, fence and reason are required")
                t = self._active.get(task_id)
                if t is not None and t.fence == fence:
                    self._lose(t, f"lock_lost: {reason}", reason)
            elif kind == "run_cancelled":
                run_id, reason = msg.get("runId"), msg.get("reason")
                if not isinstance(run_id, str) or not isinstance(reason, str):
                    raise ValueError("run_cancelled: runId and reason are required")
                self._jobs.cancel(run_id, reason)
            else:
                log.warning("ignoring an unknown push %r", str(kind)[:50])
        except ValueError as e:
            log.warning("ignoring a malformed push: %s", e)

    # ---- reconnect reconciliation (invariant 4) ----

    def _on_ready(self, hello: HelloResult, first: bool) -> None:
        previous = self._previous_instance
        self._previous_instance = hello.instance_id
        resumed = not first and (hello.resumed if hello.resumed is not None else hello.instance_id == previous)
        self._emit("ready", {"instance_id": hello.instance_id, "resumed": resumed, "first": first})
        if first:
            return
        if not resumed:
            for t in list(self._active.values()):
                self._lose(t, "the instance could not be resumed: its locks are gone")
            return
        if hello.locks is None:
            return
        held = {lock.task_id: lock.fence for lock in hello.locks}
        for t in list(self._active.values()):
            if held.get(t.task_id) != t.fence:
                self._lose(t, "the lock did not survive the reconnect")
        for lock in hello.locks:
            active = self._active.get(lock.task_id)
            if active is not None and active.fence == lock.fence:
                continue
            log.warning("task %s: returning a lock nobody here is working on", lock.task_id)
            self._spawn(self._safe_report(lock.task_id, lock.fence, "backlog", note="claim reply lost in a reconnect; returned unworked"))

    def _on_closed(self, error: Optional[BaseException]) -> None:
        self._stop.set()
        for t in list(self._active.values()):
            self._lose(t, "the connection is closed")
        self._emit("closed", {"error": error})

    # ---- shutdown ----

    async def close(self, timeout: float = 10.0) -> None:
        """Graceful shutdown: stop claiming, wait up to ``timeout`` seconds for running handlers,
        then cancel them (tasks are reported ``backlog``), and close the socket."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._close(timeout))
        await asyncio.shield(self._closing)

    async def _close(self, timeout: float) -> None:
        self._stop.set()

        def busy() -> List["asyncio.Future[Any]"]:
            events = [t.done for t in self._active.values()] + self._jobs.running()
            return [asyncio.ensure_future(e.wait()) for e in events]

        waiting = busy()
        if waiting:
            _, pending = await asyncio.wait(waiting, timeout=timeout)
            for f in pending:
                f.cancel()
            if self._active or self._jobs.running():
                closing = AgentClosingError()
                for t in list(self._active.values()):
                    t.signal.abort(closing)
                    if t.handler is not None:
                        t.handler.cancel()
                self._jobs.abort_all(closing)
                waiting = busy()
                if waiting:
                    _, pending = await asyncio.wait(waiting, timeout=5)
                    for f in pending:
                        f.cancel()
        await self._conn.close(1000, "agent closing")
        for bg in list(self._background):
            bg.cancel()


class _Connecting:
    """What ``connect()`` returns: ``await`` it, or use it as ``async with``."""

    def __init__(self, agent: Agent) -> None:
        self._agent = agent

    def __await__(self) -> Any:
        return self._agent.start().__await__()

    async def __aenter__(self) -> Agent:
        return await self._agent.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self._agent.close()


def connect(url: str, *, token: str, role: str, name: str, **options: Any) -> _Connecting:
    """Connects, says hello, and gives a ready ``Agent``::

        async with gaffer_agent.connect(url, token=token, role="py", name="py-1") as agent:
            await agent.work(handle)

    Options (keyword): ``version``, ``request_timeout`` (30 s), ``connect_timeout`` (10 s),
    ``reconnect`` (a ReconnectPolicy, True, or False), ``heartbeat_interval`` (default: what the
    server suggests), ``telemetry_flush_every`` (0.05 s: how long a partly filled log frame waits)."""
    return _Connecting(Agent(url, token=token, role=role, name=name, **options))
