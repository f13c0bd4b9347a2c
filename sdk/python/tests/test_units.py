"""Pure parts: backoff, renew cadence, URLs, error mapping, strict parsing, telemetry batching
(the TypeScript SDK's sdk.test.ts, plus the Python-only pieces)."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List

import pytest

from conftest import run
from gaffer_agent import (
    BacklogError,
    BlockedError,
    FatalError,
    GafferRequestError,
    JobTrigger,
    NeedsHumanError,
    ReconnectPolicy,
    RetryableError,
    Task,
    TaskFailedError,
    agent_url,
    backoff_delay,
    renew_interval,
)
from gaffer_agent.errors import error_class_of, error_message, report_status_of
from gaffer_agent.telemetry import Telemetry


def test_renews_about_every_quarter_window_at_most_every_30_min() -> None:
    assert renew_interval(7200) == 1800
    assert renew_interval(600) == 150
    assert renew_interval(1) == 0.25


def test_backs_off_exponentially_with_equal_jitter_capped() -> None:
    policy = ReconnectPolicy(initial_delay=0.1, max_delay=1.0)
    assert [round(backoff_delay(n, policy, lambda: 0), 3) for n in range(1, 7)] == [0.05, 0.1, 0.2, 0.4, 0.5, 0.5]
    assert [round(backoff_delay(n, policy, lambda: 1), 3) for n in range(1, 7)] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    assert round(backoff_delay(3, policy, lambda: 0.5), 3) == 0.3


def test_normalises_the_url_and_refuses_a_token_in_it() -> None:
    assert agent_url("http://127.0.0.1:7311") == "ws://127.0.0.1:7311/agent"
    assert agent_url("ws://127.0.0.1:7311/agent") == "ws://127.0.0.1:7311/agent"
    assert agent_url("https://localhost:1/") == "wss://localhost:1/agent"
    with pytest.raises(ValueError, match="token"):
        agent_url("ws://127.0.0.1:7311/agent?token=abc")
    with pytest.raises(ValueError, match="scheme"):
        agent_url("ftp://x")


def test_maps_outcome_errors_to_job_error_classes_and_task_statuses() -> None:
    class Custom(Exception):
        error_class = "needs_human"

    class Back(Exception):
        report_status = "backlog"

    cases = [
        (RetryableError("x"), "retryable", "backlog"),
        (FatalError("x"), "fatal", "failed"),
        (NeedsHumanError("x"), "needs_human", "blocked"),
        (BlockedError("x"), "needs_human", "blocked"),
        (BacklogError("x"), "retryable", "backlog"),
        (TaskFailedError("x"), "fatal", "failed"),
        (ValueError("x"), "retryable", "failed"),
        (Custom("x"), "needs_human", "blocked"),  # duck typing
        (Back("x"), "retryable", "backlog"),
    ]
    for e, cls, status in cases:
        assert (error_class_of(e, "retryable"), report_status_of(e)) == (cls, status), type(e).__name__
    assert FatalError("bad", output={"f": 1}).output == {"f": 1}


def test_keeps_messages_short_for_the_wire() -> None:
    assert error_message(ValueError("boom")) == "boom"
    assert error_message(ValueError()) == "ValueError"
    assert error_message(ValueError("x" * 20), 10) == "x" * 9 + "…"
    assert str(GafferRequestError("not_holder", 409, "stale fence")) == "not_holder (409): stale fence"


def _task(**over: Any) -> Dict[str, Any]:
    base = {"id": 7, "title": "t", "role": "dev", "status": "in_progress", "priority": 1, "payload": {"a": 1}, "dependsOn": [], "attempt": 2, "previouslyExpired": True, "traceId": "abc"}
    return {**base, **over}


def test_parses_tasks_strictly_and_names_the_bad_field() -> None:
    t = Task.from_wire(_task(extra="ignored"))
    assert (t.id, t.attempt, t.previously_expired, t.payload, t.trace_id) == (7, 2, True, {"a": 1}, "abc")
    with pytest.raises(ValueError, match="'title'"):
        Task.from_wire({k: v for k, v in _task().items() if k != "title"})
    with pytest.raises(ValueError, match="'id'"):
        Task.from_wire(_task(id="7"))
    with pytest.raises(ValueError, match="'attempt'"):
        Task.from_wire(_task(attempt=True))  # a bool is not a number here


def test_parses_every_job_trigger_field_including_the_additions() -> None:
    push = {
        "type": "job_trigger", "runId": "run_1", "jobId": "job_1", "job": "daily", "slot": "2026-11-30", "attempt": 2,
        "payload": {"c": 1}, "idempotencyKey": "job_1:2026-11-30", "deadline": "2026-11-30T10:00:00.000Z", "completedSteps": ["collect"],
        "version": 3, "traceId": "t1", "slotAt": "2026-11-30T01:00:00.000Z", "trigger": "schedule", "backfillId": 4,
        "covers": ["2026-11-29"], "previousError": "SMTP timeout", "approval": {"decision": "approved", "note": "ok", "by": "operator:http", "at": "2026-11-30T09:30:00.000Z"},
    }  # fmt: skip
    t = JobTrigger.from_wire(push)
    assert (t.run_id, t.completed_steps, t.backfill_id, t.covers, t.previous_error) == ("run_1", ["collect"], 4, ["2026-11-29"], "SMTP timeout")
    assert t.approval is not None and (t.approval.decision, t.approval.by) == ("approved", "operator:http")
    with pytest.raises(ValueError, match="'runId'"):
        JobTrigger.from_wire({k: v for k, v in push.items() if k != "runId"})
    with pytest.raises(ValueError, match="completedSteps"):
        JobTrigger.from_wire({**push, "completedSteps": [1]})


def test_telemetry_batches_lines_and_sums_usage() -> None:
    sent: List[tuple] = []

    async def send(type_: str, fields: Dict[str, Any]) -> Any:
        sent.append((type_, fields))
        return {"accepted": len(fields.get("lines", []))} if type_ == "log" else {"usage": {"inputTokens": 30, "outputTokens": 5, "costUsd": 0.5}}

    async def main() -> None:
        t = Telemetry(send, {"runId": "run_1"}, flush_every=10, max_lines=3)
        t.log("a")
        t.log("b", level="warn", stream="stderr")
        t.usage(input_tokens=10, cost_usd=0.25)
        t.usage(input_tokens=20, output_tokens=5, cost_usd=0.25, model="m")
        assert sent == []  # nothing until the batch is due
        t.log("c")  # the third line fills the batch: sent at once
        await asyncio.sleep(0.01)
        assert [s[0] for s in sent] == ["log", "usage"]
        assert [line["text"] for line in sent[0][1]["lines"]] == ["a", "b", "c"]
        assert sent[0][1]["runId"] == "run_1" and sent[0][1]["lines"][1]["level"] == "warn"
        assert sent[1][1] == {"runId": "run_1", "inputTokens": 30, "outputTokens": 5, "costUsd": 0.5, "model": "m"}
        assert t.last_usage == {"inputTokens": 30, "outputTokens": 5, "costUsd": 0.5}
        with pytest.raises(ValueError):
            t.log("x", level="loud")
        with pytest.raises(ValueError):
            t.usage(input_tokens=-1)

    run(main())


def test_telemetry_turns_off_when_the_server_does_not_know_the_frame() -> None:
    calls: List[str] = []

    async def send(type_: str, fields: Dict[str, Any]) -> Any:
        calls.append(type_)
        raise GafferRequestError("bad_request", 400, 'unknown type "log"')

    async def main() -> None:
        t = Telemetry(send, {"taskId": 1}, flush_every=10)
        t.log("a")
        await t.close()
        t.log("b")
        t.usage(input_tokens=1)
        await t.close()
        assert calls == ["log"]

    run(main())
