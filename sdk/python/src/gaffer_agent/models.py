"""Typed views of the protocol's objects (docs/protocol.md), parsed strictly from the wire.

Each ``from_wire`` raises ``ValueError`` naming the field when a required field is missing or of
the wrong type: a malformed push is then logged and ignored, a malformed reply is an error —
never a half-filled object handed to your code. Unknown fields are ignored (the contract may grow);
the whole wire object stays available as ``raw``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple


def _req(d: Mapping[str, Any], key: str, kind: type | Tuple[type, ...], where: str) -> Any:
    if key not in d:
        raise ValueError(f"{where}: missing field {key!r}")
    v = d[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    # bool is an int in Python; the protocol never sends a bool where a number is meant.
    if not isinstance(v, kinds) or (isinstance(v, bool) and bool not in kinds):
        raise ValueError(f"{where}: field {key!r} has the wrong type ({type(v).__name__})")
    return v


def _opt(d: Mapping[str, Any], key: str, kind: type | Tuple[type, ...], where: str) -> Any:
    if d.get(key) is None:
        return None
    return _req(d, key, kind, where)


def _str_list(d: Mapping[str, Any], key: str, where: str, required: bool = True) -> List[str]:
    v = _req(d, key, list, where) if required else (_opt(d, key, list, where) or [])
    if not all(isinstance(x, str) for x in v):
        raise ValueError(f"{where}: field {key!r} must be a list of strings")
    return list(v)


@dataclass(frozen=True)
class Lock:
    fence: int
    expires_at: str

    @staticmethod
    def from_wire(d: Mapping[str, Any]) -> "Lock":
        return Lock(fence=_req(d, "fence", int, "lock"), expires_at=_req(d, "expiresAt", str, "lock"))


@dataclass(frozen=True)
class Task:
    """A task as Gaffer sends it (``claim``, ``report``, ``create_task`` results)."""

    id: int
    title: str
    role: str
    status: str
    priority: int
    payload: Any
    depends_on: List[int]
    attempt: int
    previously_expired: bool
    note: Optional[str] = None
    output: Any = None
    trace_id: Optional[str] = None
    #: Why the last attempt did not count, e.g. ``verification failed: tests: npm exited with 1`` (PROTOCOL §13).
    previous_error: Optional[str] = None
    #: ``already_done`` when Gaffer's checks found the work done before handing out another attempt.
    disposition: Optional[str] = None
    #: The latest attempt's verification ``{at, passed, checks: [{name, kind, passed, detail, durationMs}]}``, where one ran.
    verification: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @staticmethod
    def from_wire(d: Mapping[str, Any]) -> "Task":
        w = "task"
        if not isinstance(d, Mapping):
            raise ValueError("task: not an object")
        depends_on = _req(d, "dependsOn", list, w)
        if not all(isinstance(x, int) for x in depends_on):
            raise ValueError("task: field 'dependsOn' must be a list of task ids")
        return Task(
            id=_req(d, "id", int, w),
            title=_req(d, "title", str, w),
            role=_req(d, "role", str, w),
            status=_req(d, "status", str, w),
            priority=_req(d, "priority", int, w),
            payload=d.get("payload"),
            depends_on=list(depends_on),
            attempt=_req(d, "attempt", int, w),
            previously_expired=_req(d, "previouslyExpired", bool, w),
            note=_opt(d, "note", str, w),
            output=d.get("output"),
            trace_id=_opt(d, "traceId", str, w),
            previous_error=_opt(d, "previousError", str, w),
            disposition=_opt(d, "disposition", str, w),
            verification=_opt(d, "verification", dict, w),
            raw=dict(d),
        )


@dataclass(frozen=True)
class ClaimedTask:
    task: Task
    lock: Lock


@dataclass(frozen=True)
class HeldLock:
    task_id: int
    fence: int
    expires_at: Optional[str] = None


@dataclass(frozen=True)
class HelloResult:
    instance_id: str
    heartbeat_interval_ms: int
    lock_window_s: float
    server_time: str
    reconnect_grace_s: Optional[float] = None
    heartbeat_timeout_s: Optional[float] = None
    protocol_version: Optional[int] = None
    resumed: Optional[bool] = None
    locks: Optional[List[HeldLock]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @staticmethod
    def from_wire(d: Any) -> "HelloResult":
        w = "hello result"
        if not isinstance(d, Mapping):
            raise ValueError(f"{w}: not an object")
        locks = None
        if isinstance(d.get("locks"), list):
            locks = [HeldLock(task_id=_req(x, "taskId", int, "held lock"), fence=_req(x, "fence", int, "held lock"), expires_at=x.get("expiresAt")) for x in d["locks"]]
        return HelloResult(
            instance_id=_req(d, "instanceId", str, w),
            heartbeat_interval_ms=_req(d, "heartbeatIntervalMs", int, w),
            lock_window_s=_req(d, "lockWindowS", (int, float), w),
            server_time=_req(d, "serverTime", str, w),
            reconnect_grace_s=_opt(d, "reconnectGraceS", (int, float), w),
            heartbeat_timeout_s=_opt(d, "heartbeatTimeoutS", (int, float), w),
            protocol_version=_opt(d, "protocolVersion", int, w),
            resumed=_opt(d, "resumed", bool, w),
            locks=locks,
            raw=dict(d),
        )


@dataclass(frozen=True)
class Approval:
    """PROTOCOL §8: a held run approved by the operator carries the decision."""

    decision: str
    note: Optional[str] = None
    by: Optional[str] = None
    at: Optional[str] = None


@dataclass(frozen=True)
class JobTrigger:
    """A ``job_trigger`` push: every documented field, snake_case."""

    run_id: str
    job_id: str
    job: str
    slot: str
    attempt: int
    payload: Any
    idempotency_key: str
    deadline: str
    completed_steps: List[str]
    version: int
    trace_id: str
    slot_at: Optional[str] = None
    trigger: Optional[str] = None
    backfill_id: Optional[int] = None
    covers: List[str] = field(default_factory=list)
    previous_error: Optional[str] = None
    approval: Optional[Approval] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @staticmethod
    def from_wire(d: Mapping[str, Any]) -> "JobTrigger":
        w = "job_trigger"
        approval = None
        if isinstance(d.get("approval"), Mapping):
            a = d["approval"]
            approval = Approval(decision=_req(a, "decision", str, "approval"), note=a.get("note"), by=a.get("by"), at=a.get("at"))
        return JobTrigger(
            run_id=_req(d, "runId", str, w),
            job_id=_req(d, "jobId", str, w),
            job=_req(d, "job", str, w),
            slot=_req(d, "slot", str, w),
            attempt=_req(d, "attempt", int, w),
            payload=d.get("payload"),
            idempotency_key=_req(d, "idempotencyKey", str, w),
            deadline=_req(d, "deadline", str, w),
            completed_steps=_str_list(d, "completedSteps", w),
            version=_req(d, "version", int, w),
            trace_id=_req(d, "traceId", str, w),
            slot_at=_opt(d, "slotAt", str, w),
            trigger=_opt(d, "trigger", str, w),
            backfill_id=_opt(d, "backfillId", int, w),
            covers=_str_list(d, "covers", w, required=False),
            previous_error=_opt(d, "previousError", str, w),
            approval=approval,
            raw=dict(d),
        )


@dataclass(frozen=True)
class PrecheckRequest:
    request_id: str
    check: str
    slot: str

    @staticmethod
    def from_wire(d: Mapping[str, Any]) -> "PrecheckRequest":
        w = "precheck"
        return PrecheckRequest(request_id=_req(d, "requestId", str, w), check=_req(d, "check", str, w), slot=_req(d, "slot", str, w))


@dataclass(frozen=True)
class PrecheckAnswer:
    ready: bool
    reason: Optional[str] = None
    evidence: Any = None


@dataclass(frozen=True)
class Result:
    """What a task handler may return to add a note to the report (a plain dict is the output)."""

    output: Any = None
    note: Optional[str] = None
