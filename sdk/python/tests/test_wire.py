"""Wire behaviour against a fake server: bad replies, blips, timeouts, refusals, and the frames
today's Gaffer does not send yet (``lock_lost``, ``run_cancelled``, ``approval``, ``claimNext``'s
``next``, replies to ``log``/``usage``) — scripted here exactly as PROTOCOL.md defines them."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List

import pytest

import gaffer_agent
from conftest import FakeServer, refuse, reply, run, until, wire_task
from gaffer_agent import AgentClosedError, ConnectionLostError, GafferSdkError, LockLostError, ReconnectPolicy, RequestTimeoutError, RunCancelledError

FAST = ReconnectPolicy(initial_delay=0.02, max_delay=0.05)


def connect(url: str, **kw: Any) -> Any:
    return gaffer_agent.connect(url, token="gft_secret", role="dev", name="py-test", reconnect=kw.pop("reconnect", FAST), **kw)


def test_matches_replies_by_id_maps_errors_and_ignores_junk() -> None:
    async def on_request(msg: Dict[str, Any], ws: Any) -> None:
        await ws.send("not json")
        await ws.send(b"\x00binary")
        await ws.send(json.dumps({"type": "mystery_push"}))
        await ws.send(json.dumps({"id": "nobody-waits", "ok": True, "result": {}}))
        await ws.send(json.dumps([1, 2]))
        if msg["type"] == "renew":
            await refuse(ws, msg, "not_holder", 409, "stale fence")
        else:
            await reply(ws, msg, {"task": None})

    async def main() -> None:
        async with FakeServer(on_request) as srv:
            async with connect(srv.url) as agent:
                assert srv.auth == ["Bearer gft_secret"]
                assert "token" not in srv.hellos[0]  # the token is only in the header
                assert agent.lock_window_s == 40 and agent.instance_id == "inst_1"
                assert await agent.claim() is None
                with pytest.raises(gaffer_agent.GafferRequestError) as e:
                    await agent.renew(1, 1)
                assert (e.value.code, e.value.status, e.value.message) == ("not_holder", 409, "stale fence")
            with pytest.raises(AgentClosedError):
                await agent.claim()

    run(main())


def test_out_of_order_replies_reach_their_requests() -> None:
    held: List[Any] = []

    async def on_request(msg: Dict[str, Any], ws: Any) -> None:
        held.append(msg)
        if len(held) == 2:  # answer the second request first
            await reply(ws, held[1], {"serverTime": "second"})
            await reply(ws, held[0], {"serverTime": "first"})

    async def main() -> None:
        async with FakeServer(on_request) as srv:
            async with connect(srv.url) as agent:
                a, b = await asyncio.gather(agent.heartbeat(), agent.heartbeat())
                assert (a, b) == ("first", "second")

    run(main())


def test_in_flight_requests_fail_on_a_blip_and_new_ones_wait_for_the_resumed_hello() -> None:
    answer = {"on": False}

    async def on_request(msg: Dict[str, Any], ws: Any) -> None:
        if answer["on"]:
            await reply(ws, msg, {"serverTime": "now"})

    async def main() -> None:
        async with FakeServer(on_request) as srv:
            async with connect(srv.url) as agent:
                in_flight = asyncio.ensure_future(agent.heartbeat())
                await until(lambda: srv.of_type("heartbeat"), "the heartbeat to arrive")
                agent._conn.drop_socket()
                with pytest.raises(ConnectionLostError):
                    await in_flight
                answer["on"] = True
                assert await agent.heartbeat() == "now"  # sent once the new socket said hello
                assert len(srv.hellos) == 2
                assert srv.hellos[1]["instanceId"] == "inst_1"  # resume the same instance
                assert agent.instance_id == "inst_1"

    run(main())


def test_times_out_a_request_the_server_never_answers() -> None:
    async def on_request(msg: Dict[str, Any], ws: Any) -> None:
        pass

    async def main() -> None:
        async with FakeServer(on_request) as srv:
            async with connect(srv.url, request_timeout=0.05) as agent:
                with pytest.raises(RequestTimeoutError):
                    await agent.heartbeat()

    run(main())


def test_fails_fast_when_nothing_listens() -> None:
    async def main() -> None:
        async with FakeServer(lambda m, w: asyncio.sleep(0)) as srv:
            url = srv.url
        with pytest.raises(GafferSdkError) as e:
            await connect(url)
        assert e.value.code == "connect_failed"

    run(main())


def test_a_malformed_hello_reply_is_a_protocol_error_not_a_retry_loop() -> None:
    async def main() -> None:
        async with FakeServer(lambda m, w: asyncio.sleep(0), hello=lambda msg: {"id": msg["id"], "ok": True, "result": {"instanceId": 5}}) as srv:
            with pytest.raises(GafferSdkError) as e:
                await connect(srv.url)
            assert e.value.code == "protocol" and "instanceId" in e.value.message
            assert len(srv.hellos) == 1

    run(main())


def test_a_refused_hello_ends_the_connection_for_good() -> None:
    async def main() -> None:
        async with FakeServer(lambda m, w: asyncio.sleep(0), hello=lambda msg: {"id": msg["id"], "ok": False, "error": {"code": "forbidden", "status": 403, "message": "role not allowed"}}) as srv:
            with pytest.raises(gaffer_agent.GafferRequestError) as e:
                await connect(srv.url)
            assert (e.value.code, e.value.status) == ("forbidden", 403)

    run(main())


def test_close_4403_after_hello_is_final_no_reconnect() -> None:
    async def on_request(msg: Dict[str, Any], ws: Any) -> None:
        await ws.close(4403, "token revoked")

    async def main() -> None:
        async with FakeServer(on_request) as srv:
            agent = await connect(srv.url)
            closed: List[Any] = []
            agent.on("closed", closed.append)
            with pytest.raises((ConnectionLostError, GafferSdkError)):
                await agent.heartbeat()
            await until(lambda: closed, "the agent to close")
            assert isinstance(closed[0]["error"], GafferSdkError) and closed[0]["error"].code == "unauthorized"
            await asyncio.sleep(0.2)
            assert len(srv.hellos) == 1 and agent.closed
            await agent.close()

    run(main())


def test_malformed_and_unknown_pushes_are_ignored() -> None:
    async def on_request(msg: Dict[str, Any], ws: Any) -> None:
        await reply(ws, msg, {"serverTime": "now"})

    async def main() -> None:
        async with FakeServer(on_request) as srv:
            async with connect(srv.url) as agent:
                seen: List[Any] = []

                async def handler(ctx: Any) -> None:
                    seen.append(ctx)

                agent.on_job(handler)
                ws = srv.sockets[0]
                await ws.send(json.dumps({"type": "job_trigger", "jobId": "j", "job": "x"}))  # no runId …
                await ws.send(json.dumps({"type": "lock_lost", "taskId": "one"}))
                await ws.send(json.dumps({"type": "brand_new_push", "x": 1}))
                assert await agent.heartbeat() == "now"  # still alive and answering
                await asyncio.sleep(0.05)
                assert seen == [] and srv.of_type("run_started") == []

    run(main())


def _worker_server(state: Dict[str, Any]) -> Any:
    """A fake that hands out ``state['tasks']`` and records reports."""

    async def on_request(msg: Dict[str, Any], ws: Any) -> None:
        kind = msg["type"]
        if kind == "claim":
            task = state["tasks"].pop(0) if state["tasks"] else None
            await reply(ws, msg, {"task": task, "lock": {"fence": 1, "expiresAt": "2026-11-30T11:00:00.000Z"}} if task else {"task": None})
        elif kind == "renew":
            await reply(ws, msg, {"expiresAt": "2026-11-30T11:00:00.000Z"})
        elif kind == "report":
            state["reports"].append(msg)
            result: Dict[str, Any] = {"task": wire_task(msg["taskId"], status=msg["status"]), "replayed": False}
            if msg.get("claimNext"):
                nxt = state["tasks"].pop(0) if state["tasks"] else None
                result["next"] = {"task": nxt, "lock": {"fence": 1, "expiresAt": "2026-11-30T11:00:00.000Z"}} if nxt else {"task": None}
            await reply(ws, msg, result)
        else:
            await reply(ws, msg, {"accepted": 1} if kind == "log" else {})

    return on_request


def test_claim_next_works_the_task_the_report_handed_over_without_a_claim() -> None:
    state: Dict[str, Any] = {"tasks": [wire_task(1), wire_task(2), wire_task(3)], "reports": []}

    async def main() -> None:
        async with FakeServer(_worker_server(state)) as srv:
            async with connect(srv.url) as agent:
                worked: List[int] = []

                async def handle(task: Any) -> Dict[str, Any]:
                    worked.append(task.id)
                    return {"n": task.id}

                assert await agent.work(handle, max_tasks=3, idle_delay=0.01) == 3  # claim_next is the default
                assert worked == [1, 2, 3]
                assert len(srv.of_type("claim")) == 1  # the other two came with the reports
                assert [r.get("claimNext") for r in state["reports"]] == [True, True, None]  # the last report asks for nothing more

    run(main())


def test_a_lock_lost_push_cancels_the_handler_and_nothing_is_reported() -> None:
    state: Dict[str, Any] = {"tasks": [wire_task(9)], "reports": []}

    async def main() -> None:
        async with FakeServer(_worker_server(state)) as srv:
            async with connect(srv.url) as agent:
                reasons: List[Any] = []
                cancelled = asyncio.Event()

                async def handle(task: Any) -> None:
                    try:
                        await asyncio.sleep(30)
                    except asyncio.CancelledError:
                        reasons.append(task.signal.reason)
                        cancelled.set()
                        raise

                worker = asyncio.ensure_future(agent.work(handle, max_tasks=1))
                await until(lambda: srv.of_type("claim"), "the claim")
                await asyncio.sleep(0.05)
                await srv.sockets[0].send(json.dumps({"type": "lock_lost", "taskId": 9, "fence": 1, "reason": "force_release"}))
                await asyncio.wait_for(cancelled.wait(), 5)
                assert await worker == 1
                assert isinstance(reasons[0], LockLostError) and "force_release" in str(reasons[0])
                assert state["reports"] == []

    run(main())


def test_a_lock_lost_push_for_an_older_fence_is_ignored() -> None:
    state: Dict[str, Any] = {"tasks": [wire_task(9)], "reports": []}

    async def main() -> None:
        async with FakeServer(_worker_server(state)) as srv:
            async with connect(srv.url) as agent:
                go = asyncio.Event()

                async def handle(task: Any) -> Dict[str, Any]:
                    await go.wait()
                    return {"done": True}

                worker = asyncio.ensure_future(agent.work(handle, max_tasks=1))
                await until(lambda: srv.of_type("claim"), "the claim")
                await asyncio.sleep(0.05)
                await srv.sockets[0].send(json.dumps({"type": "lock_lost", "taskId": 9, "fence": 0, "reason": "expired"}))
                await asyncio.sleep(0.05)
                go.set()
                await worker
                assert [r["status"] for r in state["reports"]] == ["done"]

    run(main())


def _job_server(state: Dict[str, Any]) -> Any:
    async def on_request(msg: Dict[str, Any], ws: Any) -> None:
        state.setdefault(msg["type"], []).append(msg)
        if msg["type"] == "usage":
            await reply(ws, msg, {"usage": {"inputTokens": 150, "outputTokens": 20, "costUsd": 0.03}})
        elif msg["type"] == "log":
            await reply(ws, msg, {"accepted": len(msg["lines"])})
        else:
            await reply(ws, msg, {"run": {"id": msg.get("runId")}} if msg["type"] == "run_result" else {})

    return on_request


def _trigger(**extra: Any) -> str:
    base = {
        "type": "job_trigger", "runId": "run_1", "jobId": "job_1", "job": "daily", "slot": "2026-11-30", "attempt": 1, "payload": {},
        "idempotencyKey": "job_1:2026-11-30", "deadline": "2099-01-01T00:00:00.000Z", "completedSteps": [], "version": 1, "traceId": "t",
    }  # fmt: skip
    return json.dumps({**base, **extra})


def test_a_run_cancelled_push_cancels_the_job_and_sends_nothing_more() -> None:
    state: Dict[str, Any] = {}

    async def main() -> None:
        async with FakeServer(_job_server(state)) as srv:
            async with connect(srv.url) as agent:
                reasons: List[Any] = []

                async def job(ctx: Any) -> None:
                    try:
                        await asyncio.sleep(30)
                    except asyncio.CancelledError:
                        reasons.append(ctx.signal.reason)
                        raise

                agent.on_job(job)
                await srv.sockets[0].send(_trigger())
                await until(lambda: state.get("run_started"), "run_started")
                await asyncio.sleep(0.05)
                await srv.sockets[0].send(json.dumps({"type": "run_cancelled", "runId": "run_1", "reason": "operator"}))
                await until(lambda: reasons, "the cancellation")
                await asyncio.sleep(0.1)
                assert isinstance(reasons[0], RunCancelledError) and reasons[0].reason == "operator"
                assert "run_result" not in state

    run(main())


def test_job_context_carries_the_approval_and_batches_log_and_usage_before_the_result() -> None:
    state: Dict[str, Any] = {}

    async def main() -> None:
        async with FakeServer(_job_server(state)) as srv:
            async with gaffer_agent.connect(srv.url, token="t", role="dev", name="py", telemetry_flush_every=60) as agent:
                seen: List[Any] = []

                async def job(ctx: Any) -> Dict[str, Any]:
                    seen.append((ctx.approval, ctx.attempt))
                    for i in range(3):
                        ctx.log(f"line {i}")
                    ctx.usage(input_tokens=100, output_tokens=20, model="m")
                    ctx.usage(input_tokens=50, cost_usd=0.03)
                    return {"sent": 3}

                agent.on_job(job)
                await srv.sockets[0].send(_trigger(attempt=2, approval={"decision": "approved", "note": "go", "by": "operator:http", "at": "2026-11-30T09:30:00.000Z"}))
                await until(lambda: state.get("run_result"), "run_result")
                approval, attempt = seen[0]
                assert (approval.decision, approval.note, attempt) == ("approved", "go", 2)
                order = [f["type"] for f in srv.frames if f["type"] in ("log", "usage", "run_result")]
                assert order == ["log", "usage", "run_result"]  # one batch each, before the result
                assert [line["text"] for line in state["log"][0]["lines"]] == ["line 0", "line 1", "line 2"]
                assert {k: state["usage"][0][k] for k in ("runId", "inputTokens", "outputTokens", "costUsd", "model")} == {
                    "runId": "run_1", "inputTokens": 150, "outputTokens": 20, "costUsd": 0.03, "model": "m",
                }  # fmt: skip
                assert state["run_result"][0]["output"] == {"sent": 3}

    run(main())


def test_a_later_attempt_arriving_while_the_earlier_one_finishes_runs_after_it_and_a_reoffer_is_ignored() -> None:
    state: Dict[str, Any] = {}
    release = asyncio.Event()

    async def on_request(msg: Dict[str, Any], ws: Any) -> None:
        state.setdefault(msg["type"], []).append(msg)
        if msg["type"] == "run_result" and len(state["run_result"]) == 1:
            # The result of attempt 1 is committed but its reply is late (an approval raced it).
            async def late() -> None:
                await release.wait()
                await reply(ws, msg, {"run": {"id": msg["runId"]}})

            asyncio.ensure_future(late())
            return
        await reply(ws, msg, {"run": {"id": msg.get("runId")}} if msg["type"] == "run_result" else {})

    async def main() -> None:
        async with FakeServer(on_request) as srv:
            async with connect(srv.url) as agent:
                attempts: List[int] = []

                async def job(ctx: Any) -> Dict[str, Any]:
                    attempts.append(ctx.attempt)
                    if ctx.attempt == 1:
                        raise gaffer_agent.NeedsHumanError("which account?")
                    return {"ok": True}

                agent.on_job(job)
                await srv.sockets[0].send(_trigger())
                await until(lambda: state.get("run_result"), "the result of attempt 1")
                await srv.sockets[0].send(_trigger())  # a re-offer of the attempt still here: a duplicate
                await srv.sockets[0].send(_trigger(attempt=2))  # the approved re-run
                assert await agent.request("heartbeat") == {}
                assert attempts == [1]
                release.set()
                await until(lambda: len(attempts) == 2, "attempt 2")
                await until(lambda: len(state.get("run_result", [])) == 2, "the result of attempt 2")
                assert attempts == [1, 2]
                assert len(state["run_started"]) == 2

    run(main())


def test_a_trigger_without_a_job_handler_is_not_acknowledged() -> None:
    state: Dict[str, Any] = {}

    async def main() -> None:
        async with FakeServer(_job_server(state)) as srv:
            async with connect(srv.url) as agent:
                await srv.sockets[0].send(_trigger())
                assert await agent.request("heartbeat") == {}
                assert "run_started" not in state

    run(main())


def test_reports_checkpoints_and_results_refused_for_now_are_sent_again_after_a_growing_pause(monkeypatch: Any) -> None:
    """``rate_limited`` / ``unavailable`` mean nothing happened: abandoning the report would leave
    the lock held for the whole lock window (the TypeScript SDK's fix, the same here)."""
    pauses: List[float] = []

    async def no_wait(seconds: float) -> None:
        pauses.append(seconds)

    monkeypatch.setattr("gaffer_agent.retry._sleep", no_wait)
    refusals = {"report": ["rate_limited", "unavailable"], "run_step": ["unavailable"], "run_result": ["rate_limited"]}
    seen: Dict[str, int] = {}
    tasks = [wire_task(5)]

    async def on_request(msg: Dict[str, Any], ws: Any) -> None:
        kind = msg["type"]
        seen[kind] = seen.get(kind, 0) + 1
        if refusals.get(kind):
            code = refusals[kind].pop(0)
            await refuse(ws, msg, code, 429 if code == "rate_limited" else 503, "later, please")
        elif kind == "claim":
            task = tasks.pop(0) if tasks else None
            await reply(ws, msg, {"task": task, "lock": {"fence": 1, "expiresAt": "2026-11-30T11:00:00.000Z"}} if task else {"task": None})
        elif kind == "report":
            await reply(ws, msg, {"task": wire_task(msg["taskId"], status=msg["status"]), "replayed": False})
        else:
            await reply(ws, msg, {})

    async def main() -> None:
        async with FakeServer(on_request) as srv:
            async with connect(srv.url) as agent:
                assert await agent.work(lambda task: asyncio.sleep(0, {"ok": True}), max_tasks=1) == 1
                assert [r["status"] for r in srv.of_type("report")] == ["done"] * 3  # refused twice, then stored
                done = asyncio.Event()

                async def job(ctx: Any) -> str:
                    await ctx.step("send", lambda: "sent")
                    done.set()
                    return "ok"

                agent.on_job(job)
                await srv.sockets[0].send(json.dumps({
                    "type": "job_trigger", "runId": "run_9", "jobId": "job_1", "job": "daily", "slot": "2026-11-30", "attempt": 1, "payload": {},
                    "idempotencyKey": "k", "deadline": "2099-01-01T00:00:00.000Z", "completedSteps": [], "version": 1, "traceId": "t",
                }))  # fmt: skip
                await until(lambda: seen.get("run_result", 0) == 2, "the run_result, sent again")
                assert (seen["run_step"], seen["run_result"]) == (2, 2)

    run(main())
    assert pauses == [0.1, 0.2, 0.1, 0.1]  # growing within one request; each request starts over


def test_a_claim_refused_as_rate_limited_waits_at_least_a_second_before_the_next() -> None:
    async def on_request(msg: Dict[str, Any], ws: Any) -> None:
        if msg["type"] == "claim":
            await refuse(ws, msg, "rate_limited", 429, "slow down")
        else:
            await reply(ws, msg, {})

    async def main() -> List[float]:
        async with FakeServer(on_request) as srv:
            async with connect(srv.url) as agent:
                pauses: List[float] = []

                async def record(seconds: float) -> None:
                    pauses.append(seconds)
                    if len(pauses) == 2:
                        await agent.close()

                agent._sleep = record  # type: ignore[method-assign]
                await agent.work(lambda task: None, idle_delay=0.01)
                assert len(srv.of_type("claim")) == 2
                return pauses

    assert run(main()) == [1.0, 1.0]


def test_text_utf8_cannot_carry_is_refused_at_once_naming_the_field() -> None:
    async def on_request(msg: Dict[str, Any], ws: Any) -> None:
        await reply(ws, msg, {})

    async def main() -> None:
        async with FakeServer(on_request) as srv:
            async with connect(srv.url, request_timeout=30) as agent:
                name = b"report-\xff.csv".decode("utf-8", "surrogateescape")
                with pytest.raises(gaffer_agent.GafferRequestError) as e:
                    await asyncio.wait_for(agent.request("report", taskId=1, fence=1, status="done", output={"files": [name]}), 2)
                assert e.value.code == "bad_request" and '"output.files.0"' in e.value.message
                assert srv.of_type("report") == []  # nothing was sent

    run(main())
