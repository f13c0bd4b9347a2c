"""Pure parts: backoff, renew cadence, URLs, error mapping, strict parsing, the pauses after a
refusal, and the log outbox against a fake store (the TypeScript SDK's sdk.test.ts and
log-outbox.test.ts, plus the Python-only pieces)."""

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
from gaffer_agent import ConnectionLostError
from gaffer_agent.errors import error_class_of, error_message, report_status_of
from gaffer_agent.retry import refusal_pause
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
    # A surrogate (an undecodable file name via surrogateescape) cannot be sent as UTF-8: mended.
    name = b"caf\xe9".decode("utf-8", "surrogateescape")
    assert error_message(OSError("cannot open " + name)) == "cannot open caf\ufffd"
    assert error_message(ValueError("\U0001F600" * 5), 3) == "\U0001F600\U0001F600…"  # code points: never half an emoji
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


def test_a_task_carries_why_its_last_attempt_did_not_count() -> None:
    t = Task.from_wire(_task(previousError="verification failed: tests: npm exited with 1", verification={"passed": False, "checks": []}))
    assert t.previous_error == "verification failed: tests: npm exited with 1"
    assert t.verification == {"passed": False, "checks": []}
    assert Task.from_wire(_task()).previous_error is None
    with pytest.raises(ValueError, match="'previousError'"):
        Task.from_wire(_task(previousError=3))


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


def test_a_refusal_that_means_later_is_retried_after_a_growing_pause() -> None:
    assert [refusal_pause(n) for n in range(1, 9)] == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]


class FakeStore:
    """Stores each seq once, as Gaffer does; scripted failures by frame number (1-based)."""

    def __init__(self) -> None:
        self.stored: List[Dict[str, Any]] = []
        self.last_seq = 0
        self.frames: List[int] = []
        self.usage: List[Dict[str, Any]] = []
        self.lose: set = set()  # stored, but the reply is lost
        self.refuse: Dict[int, Exception] = {}
        self.refuse_usage: List[Exception] = []
        self.in_flight = 0
        self.most_in_flight = 0

    async def send(self, type_: str, fields: Dict[str, Any]) -> Any:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0)
            if type_ == "usage":
                if self.refuse_usage:
                    raise self.refuse_usage.pop(0)
                self.usage.append(fields)
                return {"usage": {"inputTokens": 0, "outputTokens": 0, "costUsd": 0}}
            self.frames.append(len(fields["lines"]))
            n = len(self.frames)
            if n in self.refuse:
                raise self.refuse[n]
            dup = 0
            for line in fields["lines"]:
                if line["seq"] <= self.last_seq:
                    dup += 1
                else:
                    self.stored.append(line)
                    self.last_seq = line["seq"]
            if n in self.lose:
                raise ConnectionLostError()
            return {"accepted": len(fields["lines"]), "stored": len(fields["lines"]) - dup, "duplicates": dup, "dropped": 0, "truncated": False, "lastSeq": self.last_seq}
        finally:
            self.in_flight -= 1


def test_telemetry_numbers_lines_batches_them_one_frame_at_a_time_and_sums_usage() -> None:
    store = FakeStore()

    async def main() -> None:
        t = Telemetry(store.send, {"runId": "run_1"}, flush_every=10, max_frame_lines=3)
        t.log("a")
        t.log("b", level="warn", stream="stderr")
        t.usage(input_tokens=10, cost_usd=0.25)
        t.usage(input_tokens=20, output_tokens=5, cost_usd=0.25, model="m")
        assert store.frames == []  # nothing until the frame is full or due
        for i in range(7):
            t.log(f"n{i}")
        await t.close()
        assert store.frames == [3, 3, 3]
        assert [(line["seq"], line["text"]) for line in store.stored] == list(enumerate(["a", "b", *[f"n{i}" for i in range(7)]], 1))
        assert (store.stored[1]["level"], store.stored[1]["stream"], "stream" in store.stored[2]) == ("warn", "stderr", True)
        assert store.most_in_flight == 1
        assert store.usage == [{"runId": "run_1", "inputTokens": 30, "outputTokens": 5, "costUsd": 0.5, "model": "m"}]
        assert t.acknowledged == 9 and t.last_usage == {"inputTokens": 0, "outputTokens": 0, "costUsd": 0}
        with pytest.raises(ValueError):
            t.log("x", level="loud")
        with pytest.raises(ValueError):
            t.usage(input_tokens=-1)

    run(main())


def test_telemetry_resends_after_lost_replies_and_refusals_without_a_duplicate_or_a_loss() -> None:
    store = FakeStore()
    store.lose = {1, 3}
    store.refuse = {2: GafferRequestError("rate_limited", 429, "the log writer is behind"), 5: GafferRequestError("unavailable", 503, "busy")}

    async def main() -> None:
        t = Telemetry(store.send, {"taskId": 1, "fence": 1}, flush_every=0.001, max_frame_lines=50)
        for i in range(1, 301):
            await t.log(f"n {i}")
        await t.close()

    run(main())
    assert [line["text"] for line in store.stored] == [f"n {i}" for i in range(1, 301)]
    assert [line["seq"] for line in store.stored] == list(range(1, 301))


def test_telemetry_keeps_memory_bounded_awaiting_waits_for_room_others_are_dropped_and_counted() -> None:
    store = FakeStore()

    async def main() -> None:
        t = Telemetry(store.send, {"taskId": 1}, flush_every=0.001, max_frame_lines=10, high_water_lines=20, max_buffered_lines=40)
        for i in range(100):
            t.log(f"burst {i}")  # not awaited: past 40 waiting, lines are dropped
        assert t.waiting == 40
        room = t.log("one more")
        assert not room.done()  # over the high-water mark: awaiting it waits for room
        await room
        assert t.waiting < 20
        await t.close()

    run(main())
    texts = [line["text"] for line in store.stored]
    assert texts[:40] == [f"burst {i}" for i in range(40)]
    assert texts[40] == "[gaffer sdk] 61 line(s) dropped: they were logged faster than they could be sent"
    assert len(texts) == 41


def test_telemetry_stops_when_the_work_is_not_ours_drops_a_refused_frame_and_mends_text() -> None:
    store = FakeStore()
    store.refuse = {1: GafferRequestError("bad_request", 400, "lines.0.level: bad")}

    async def main() -> None:
        t = Telemetry(store.send, {"taskId": 1}, flush_every=10, max_frame_lines=1, max_line_chars=10)
        t.log("refused")
        t.log("bad \udc80 end")
        t.log("\U0001F600" * 25)
        await t.close()
        gone = FakeStore()
        gone.refuse = {1: GafferRequestError("not_holder", 409, "lock lost")}
        t2 = Telemetry(gone.send, {"taskId": 1}, flush_every=10)
        t2.log("one")
        t2.usage(input_tokens=5)
        await t2.close()
        assert t2.stopped is not None and "not_holder" in t2.stopped
        assert t2.log("ignored").done() and t2.waiting == 0
        assert gone.usage == []

    run(main())
    assert [line["text"] for line in store.stored] == ["bad \ufffd end", "\U0001F600" * 10 + " […cut by the SDK: 25 characters in all]"]


def test_telemetry_usage_is_sent_again_when_refused_for_now_but_never_twice_after_a_lost_reply(monkeypatch: Any) -> None:
    pauses: List[float] = []

    async def no_wait(seconds: float) -> None:
        pauses.append(seconds)

    monkeypatch.setattr("gaffer_agent.retry._sleep", no_wait)
    store = FakeStore()
    store.refuse_usage = [GafferRequestError("rate_limited", 429, "slow down"), GafferRequestError("unavailable", 503, "busy")]

    async def main() -> None:
        t = Telemetry(store.send, {"runId": "r"}, flush_every=10)
        t.usage(input_tokens=7)
        await t.close()
        assert store.usage == [{"runId": "r", "inputTokens": 7}] and pauses == [0.1, 0.2]
        lost = FakeStore()
        lost.refuse_usage = [ConnectionLostError()]
        t2 = Telemetry(lost.send, {"runId": "r"}, flush_every=10)
        t2.usage(input_tokens=7)
        await t2.close()
        assert lost.usage == []  # it may have been counted: not sent a second time

    run(main())
