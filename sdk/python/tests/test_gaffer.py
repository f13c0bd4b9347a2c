"""The Python SDK against a real headless Gaffer (started by the fixtures): work and outcomes,
races of several agents, renewals, lock loss, a job with steps retried, prechecks, reconnect and
resume (a network blip and a Gaffer restart), log lines complete and in order across both, only
the holder logging, refusals, idempotency and a graceful close.
The server runs with a 4 s lock window, so the SDK renews every second."""

from __future__ import annotations

import asyncio
import signal
from typing import Any, Dict, List

import pytest

import gaffer_agent
from conftest import Gaffer, run, until
from gaffer_agent import BlockedError, FatalError, GafferRequestError, LockLostError, ReconnectPolicy, Result, RetryableError

FAST = ReconnectPolicy(initial_delay=0.05, max_delay=0.2)


def connect(g: Gaffer, role: str, name: str = "py", **kw: Any) -> Any:
    return gaffer_agent.connect(g.agent_url, token=g.token(role, name), role=role, name=name, reconnect=FAST, **kw)


def test_works_a_task_the_returned_dict_becomes_the_output(gaffer: Gaffer, role: str) -> None:
    created = gaffer.create_task("Summarise the logs", role, payload={"steps": 2}, priority=3)

    async def main() -> None:
        async with connect(gaffer, role) as agent:
            seen: List[Any] = []

            async def handle(task: Any) -> Dict[str, Any]:
                seen.append((task.id, task.title, task.payload, task.attempt, task.previously_expired, task.signal.aborted))
                return {"ok": True, "summary": "fine"}

            assert await agent.work(handle, max_tasks=1) == 1
            assert seen == [(created["id"], "Summarise the logs", {"steps": 2}, 1, False, False)]

    run(main())
    task = gaffer.task(created["id"])
    assert (task["status"], task["output"], task["lock"]) == ("done", {"ok": True, "summary": "fine"}, None)


def test_handler_outcomes_map_to_report_statuses(gaffer: Gaffer, role: str) -> None:
    # Highest priority first; "retry" goes back to the backlog, so it comes last (claimed once).
    outcomes = {
        "block": BlockedError("needs credentials"),
        "fatal": FatalError("invalid input", output={"field": "email"}),
        "crash": ValueError("boom"),
        "note": None,
        "retry": RetryableError("SMTP timeout"),
    }
    ids = {key: gaffer.create_task(key, role, priority=len(outcomes) - i)["id"] for i, key in enumerate(outcomes)}

    async def main() -> None:
        async with connect(gaffer, role) as agent:

            async def handle(task: Any) -> Any:
                error = outcomes[task.title]
                if error is None:
                    return Result(output={"n": 1}, note="all good")
                raise error

            assert await agent.work(handle, max_tasks=len(outcomes)) == len(outcomes)

    run(main())
    got = {key: gaffer.task(i) for key, i in ids.items()}
    assert {k: t["status"] for k, t in got.items()} == {"retry": "backlog", "block": "blocked", "fatal": "failed", "crash": "failed", "note": "done"}
    assert (got["retry"]["note"], got["fatal"]["output"], got["crash"]["note"]) == ("SMTP timeout", {"field": "email"}, "boom")
    assert (got["note"]["note"], got["note"]["output"]) == ("all good", {"n": 1})


def test_several_agents_race_and_each_task_is_worked_exactly_once(gaffer: Gaffer, role: str) -> None:
    ids = [gaffer.create_task(f"race {i}", role)["id"] for i in range(24)]

    async def main() -> Dict[int, List[str]]:
        worked: Dict[int, List[str]] = {}
        agents = [await connect(gaffer, role, f"racer-{n}") for n in range(4)]
        try:

            async def handle_for(name: str) -> Any:
                async def handle(task: Any) -> Dict[str, Any]:
                    worked.setdefault(task.id, []).append(name)
                    await asyncio.sleep(0.01)
                    return {"by": name}

                return handle

            loops = [asyncio.ensure_future(a.work(await handle_for(f"racer-{n}"), idle_delay=0.05)) for n, a in enumerate(agents)]
            await until(lambda: len(worked) == len(ids), "every task worked", timeout=30)
            await asyncio.sleep(0.2)  # give a double claim the chance to show
        finally:
            await asyncio.gather(*(a.close() for a in agents))
        await asyncio.gather(*loops)
        return worked

    worked = run(main())
    assert sorted(worked) == sorted(ids)
    assert all(len(names) == 1 for names in worked.values()), {k: v for k, v in worked.items() if len(v) > 1}
    assert len({names[0] for names in worked.values()}) > 1  # a real race: more than one agent won tasks
    for i in ids:
        t = gaffer.task(i)
        assert (t["status"], t["attempt"], t["output"]["by"]) == ("done", 1, worked[i][0])


def test_renews_the_lock_while_the_handler_runs(gaffer: Gaffer, role: str) -> None:
    created = gaffer.create_task("long work", role)

    async def main() -> List[str]:
        async with connect(gaffer, role) as agent:
            renewed: List[str] = []
            agent.on("task.renewed", lambda e: renewed.append(e["expires_at"]))
            expiries: List[str] = []

            async def handle(task: Any) -> None:
                first = task.expires_at
                await asyncio.sleep(5.5)  # longer than the 4 s lock window
                expiries.extend([first, task.expires_at])

            await agent.work(handle, max_tasks=1)
            assert expiries[1] > expiries[0]
            return renewed

    renewed = run(main())
    assert len(renewed) >= 3
    task = gaffer.task(created["id"])
    assert (task["status"], task["attempt"]) == ("done", 1)  # never expired, never re-claimed
    audit = gaffer.api("GET", f"/audit?type=lock.renew&subject=task:{created['id']}")
    assert len(audit["items"]) == len(renewed)


def test_a_force_released_lock_cancels_the_handler_and_nothing_is_reported(gaffer: Gaffer, role: str) -> None:
    created = gaffer.create_task("to be taken away", role)

    async def main() -> List[Any]:
        async with connect(gaffer, role) as agent:
            reasons: List[Any] = []
            lost: List[Any] = []
            agent.on("task.lost", lost.append)

            async def handle(task: Any) -> None:
                gaffer.api("POST", f"/tasks/{task.id}/release", {"reason": "operator takes it back"})
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    reasons.append(task.signal.reason)
                    raise

            # No renewal is due for a minute: only Gaffer's lock_lost push can cancel the handler.
            assert await agent.work(handle, max_tasks=1, renew_every=60) == 1
            assert lost and lost[0]["task_id"] == created["id"]
            return reasons

    reasons = run(main())
    assert isinstance(reasons[0], LockLostError) and reasons[0].lost_because == "force_release"
    task = gaffer.task(created["id"])
    assert (task["status"], task["note"], task["lock"]) == ("backlog", None, None)
    rejected = gaffer.api("GET", f"/audit?type=lock.reject&subject=task:{created['id']}")
    assert rejected["items"] == [], "nothing was sent for the lock taken away: no renewal, no report"


def test_a_job_with_steps_is_retried_and_skips_the_completed_step(gaffer: Gaffer, role: str) -> None:
    job = gaffer.api("POST", "/jobs", {"name": f"{role}-report", "role": role, "schedule": {"everyS": 86400}, "payload": {"channel": "sales"}, "retry": {"maxAttempts": 2, "firstDelayS": 0}})["job"]

    async def main() -> List[Any]:
        async with connect(gaffer, role) as agent:
            calls: List[Any] = []
            done = asyncio.Event()

            async def report_job(ctx: Any) -> Dict[str, Any]:
                calls.append(("attempt", ctx.attempt, ctx.completed_steps, ctx.payload, ctx.idempotency_key))
                calls.append(("trigger", ctx.trigger, ctx.previous_error, ctx.slot_at is not None))

                def collect() -> str:
                    calls.append(("collect", ctx.attempt))
                    return "rows:42"

                async def send() -> str:
                    calls.append(("send", ctx.attempt))
                    if ctx.attempt == 1:
                        raise RetryableError("SMTP timeout")
                    return "msg-1"

                await ctx.step("collect", collect, ref=lambda r: r)
                await ctx.step("send", send, ref=lambda r: r)
                done.set()
                return {"sent": True}

            agent.on_job(report_job)
            gaffer.api("POST", f"/jobs/{job['id']}/trigger", {"reason": "test"})
            await asyncio.wait_for(done.wait(), 30)
            await until(lambda: gaffer.api("GET", f"/runs?job={job['id']}")["items"][0]["status"] == "success", "the run to succeed")
            return calls

    calls = run(main())
    key = calls[0][4]
    assert calls == [
        ("attempt", 1, [], {"channel": "sales"}, key),
        ("trigger", "manual", None, True),
        ("collect", 1),
        ("send", 1),
        ("attempt", 2, ["collect"], {"channel": "sales"}, key),  # the same idempotency key for every attempt
        ("trigger", "manual", "SMTP timeout", True),  # the trigger's additions: what made it, the last error
        ("send", 2),
    ]
    run_row = gaffer.api("GET", f"/runs?job={job['id']}")["items"][0]
    detail = gaffer.api("GET", f"/runs/{run_row['id']}")
    assert detail["run"]["status"] == "success"
    assert [s.get("step") for s in detail["steps"]] == ["collect", "send"]


def test_answers_prechecks_with_reason_and_evidence(gaffer: Gaffer, role: str) -> None:
    job = gaffer.api(
        "POST",
        "/jobs",
        {"name": f"{role}-gated", "role": role, "schedule": {"everyS": 86400}, "preconditions": [{"kind": "agent", "check": "data-loaded", "timeoutS": 5}]},
    )["job"]

    async def main() -> List[Any]:
        async with connect(gaffer, role) as agent:
            asked: List[Any] = []
            ran = asyncio.Event()

            def data_loaded(p: Any) -> Any:
                asked.append((p.check, p.slot))
                return (True, "rows are there", {"rows": 42})

            async def job_fn(ctx: Any) -> None:
                ran.set()

            agent.on_precheck("data-loaded", data_loaded)
            agent.on_job(job_fn)
            gaffer.api("POST", f"/jobs/{job['id']}/trigger", {"reason": "test", "checkPreconditions": True})
            await asyncio.wait_for(ran.wait(), 20)
            return asked

    asked = run(main())
    assert asked and asked[0][0] == "data-loaded"
    run_row = gaffer.api("GET", f"/runs?job={job['id']}")["items"][0]
    checks = gaffer.api("GET", f"/runs/{run_row['id']}")["checks"]
    assert any("rows are there" in str(c) and "42" in str(c) for c in checks), checks


def test_a_network_blip_resumes_the_instance_and_keeps_the_lock(gaffer: Gaffer, role: str) -> None:
    created = gaffer.create_task("survives a blip", role)

    async def main() -> List[Any]:
        async with connect(gaffer, role) as agent:
            events: List[Any] = []
            agent.on("ready", events.append)
            first_instance = agent.instance_id

            async def handle(task: Any) -> Dict[str, Any]:
                agent._conn.drop_socket()  # the TCP connection dies without a close frame
                await until(lambda: len(events) == 1, "the reconnect")
                await asyncio.sleep(1.5)  # renewals go on over the new socket
                return {"after": "blip"}

            await agent.work(handle, max_tasks=1)
            assert events[0]["resumed"] is True and agent.instance_id == first_instance
            return events

    run(main())
    task = gaffer.task(created["id"])
    assert (task["status"], task["attempt"], task["output"]) == ("done", 1, {"after": "blip"})


def test_resumes_after_a_gaffer_restart_within_the_grace(own_gaffer: Gaffer, role: str) -> None:
    g = own_gaffer
    created = g.create_task("survives a restart", role)
    token = g.token(role)

    async def main() -> None:
        async with gaffer_agent.connect(g.agent_url, token=token, role=role, name="restart", reconnect=FAST) as agent:
            ready: List[Any] = []
            agent.on("ready", ready.append)
            instance = agent.instance_id

            async def handle(task: Any) -> Dict[str, Any]:
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(None, lambda: (g.stop(signal.SIGTERM), g.start()))
                await until(lambda: ready, "the agent to come back", timeout=20)
                return {"restarted": True}

            await agent.work(handle, max_tasks=1)
            assert ready[0]["resumed"] is True and agent.instance_id == instance

    run(main(), timeout=90)
    task = g.task(created["id"])
    assert (task["status"], task["attempt"], task["output"]) == ("done", 1, {"restarted": True})


def test_a_bad_token_is_refused_at_once_and_not_retried(gaffer: Gaffer) -> None:
    async def main() -> None:
        with pytest.raises(GafferRequestError) as e:
            await gaffer_agent.connect(gaffer.agent_url, token="gft_not_a_token", role="x", name="bad", reconnect=FAST)
        assert (e.value.code, e.value.status) == ("unauthorized", 401)

    run(main())


def test_a_role_bound_token_cannot_claim_another_role(gaffer: Gaffer, role: str) -> None:
    async def main() -> None:
        async with connect(gaffer, role) as agent:
            with pytest.raises(GafferRequestError) as e:
                await agent.claim(role="someone-else")
            assert e.value.code == "forbidden"

    run(main())


def test_create_task_is_idempotent_by_key(gaffer: Gaffer, role: str) -> None:
    async def main() -> None:
        async with connect(gaffer, role) as agent:
            first, replayed1 = await agent.create_task("Review PR 1207", payload={"pr": 1207}, idempotency_key=f"{role}-review-1207")
            again, replayed2 = await agent.create_task("Review PR 1207", payload={"pr": 1207}, idempotency_key=f"{role}-review-1207")
            assert (replayed1, replayed2, again.id) == (False, True, first.id)
            with pytest.raises(GafferRequestError) as e:
                await agent.create_task("Something else", idempotency_key=f"{role}-review-1207")
            assert e.value.code == "conflict"
            dep, _ = await agent.create_task("after the review", depends_on=[first.id], priority=9)
            assert dep.depends_on == [first.id]
            # P3: the dependent task is invisible until its dependency is done.
            claimed = await agent.claim()
            assert claimed is not None and claimed.task.id == first.id
            await agent.report(first.id, claimed.lock.fence, "done")
            nxt = await agent.claim()
            assert nxt is not None and nxt.task.id == dep.id
            await agent.report(dep.id, nxt.lock.fence, "backlog")

    run(main())


def test_claim_next_by_default_works_each_task_once_with_the_reports_handing_over(gaffer: Gaffer, role: str) -> None:
    ids = [gaffer.create_task(f"n{i}", role)["id"] for i in range(3)]

    async def main() -> None:
        async with connect(gaffer, role) as agent:
            worked: List[int] = []

            async def handle(task: Any) -> Dict[str, int]:
                worked.append(task.id)
                return {"id": task.id}

            assert await agent.work(handle, max_tasks=3, idle_delay=0.05) == 3
            assert worked == ids

    run(main())
    assert [(gaffer.task(i)["status"], gaffer.task(i)["attempt"]) for i in ids] == [("done", 1)] * 3


def test_close_hands_back_a_task_whose_handler_does_not_finish(gaffer: Gaffer, role: str) -> None:
    created = gaffer.create_task("slow", role)

    async def main() -> None:
        agent = await connect(gaffer, role)
        started = asyncio.Event()

        async def handle(task: Any) -> None:
            started.set()
            await asyncio.sleep(60)

        worker = asyncio.ensure_future(agent.work(handle))
        await asyncio.wait_for(started.wait(), 10)
        await agent.close(timeout=0.2)
        assert await worker == 1
        assert agent.closed

    run(main())
    task = gaffer.task(created["id"])
    assert (task["status"], task["note"], task["lock"]) == ("backlog", "the agent is shutting down", None)


def test_a_task_past_its_spend_cap_loses_its_lock_and_is_blocked_for_the_operator(gaffer: Gaffer, role: str) -> None:
    """PROTOCOL §8 for tasks: the usage the handler reports passes the task's cap; Gaffer takes the
    lock away at once (lock_lost, reason budget), the handler is cancelled and nothing is reported."""

    async def main() -> List[Any]:
        async with connect(gaffer, role, telemetry_flush_every=0.05) as agent:
            created, _ = await agent.create_task("expensive", role=role, budget={"maxCostUsdPerRun": 1})
            reasons: List[Any] = []

            async def handle(task: Any) -> None:
                task.usage(cost_usd=1.5)
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    reasons.append((created.id, task.signal.reason))
                    raise

            # No renewal is due for a minute: only Gaffer's lock_lost push can cancel the handler.
            assert await agent.work(handle, max_tasks=1, renew_every=60) == 1
            return reasons

    reasons = run(main())
    task_id, reason = reasons[0]
    assert isinstance(reason, LockLostError) and reason.lost_because == "budget"
    task = gaffer.task(task_id)
    assert (task["status"], task["lock"]) == ("blocked", None)
    assert task["note"].startswith("spend cap passed: $1.50 spent")
    items = gaffer.api("GET", f"/inbox?kind=budget&subject=task:{task_id}")["items"]
    assert [i["kind"] for i in items] == ["budget"]


def test_log_and_usage_reach_the_task_before_its_report(gaffer: Gaffer, role: str) -> None:
    """PROTOCOL §5 end to end: ctx.log / ctx.usage are stored for the task's attempt, flushed
    before the report, and read back over HTTP; after the report the agent may no longer log."""
    created = gaffer.create_task("chatty", role)

    async def main() -> None:
        async with connect(gaffer, role, telemetry_flush_every=0.05) as agent:

            async def handle(task: Any) -> Dict[str, bool]:
                task.log("starting")
                task.log("a warning", level="warn", stream="stderr")
                task.usage(input_tokens=10, output_tokens=3, cost_usd=0.25)
                await asyncio.sleep(0.2)
                return {"ok": True}

            await agent.work(handle, max_tasks=1)
            with pytest.raises(GafferRequestError) as e:
                await agent.request("log", taskId=created["id"], lines=[{"text": "too late"}])
            assert e.value.code == "not_holder"

    run(main())
    assert gaffer.task(created["id"])["status"] == "done"
    page = gaffer.api("GET", f"/tasks/{created['id']}/logs")
    assert [(l["text"], l["stream"], l["level"], l["attempt"]) for l in page["items"]] == [("starting", "agent", "info", 1), ("a warning", "stderr", "warn", 1)]
    assert gaffer.task(created["id"])["usage"] == {"inputTokens": 10, "outputTokens": 3, "costUsd": 0.25}


def test_a_job_that_needs_a_human_is_approved_and_runs_again_with_the_approval(gaffer: Gaffer, role: str) -> None:
    held_id: List[str] = []
    job = gaffer.api("POST", "/jobs", {"name": f"{role}-refund", "role": role, "schedule": {"everyS": 86400}, "retry": {"maxAttempts": 1}})["job"]

    async def main() -> List[Any]:
        async with connect(gaffer, role) as agent:
            seen: List[Any] = []
            done = asyncio.Event()

            async def refund(ctx: Any) -> Dict[str, Any]:
                seen.append(ctx.approval)
                if ctx.approval is None:
                    raise gaffer_agent.NeedsHumanError("refund 40 EUR?")
                done.set()
                return {"refunded": 40}

            agent.on_job(refund)
            gaffer.api("POST", f"/jobs/{job['id']}/trigger", {"reason": "test"})
            held = await until(lambda: next((r for r in gaffer.api("GET", f"/runs?job={job['id']}")["items"] if r["disposition"] == "held"), None), "the run to be held")
            # The server is shared by the tests: only this run's items count.
            items = gaffer.api("GET", f"/inbox?kind=needs_human&subject=run:{held['id']}")["items"]
            assert [(i["subject"], i["detail"]) for i in items] == [(f"run:{held['id']}", "refund 40 EUR?")]
            held_id.append(held["id"])
            gaffer.api("POST", f"/runs/{held['id']}/approve", {"note": "yes, goodwill"})
            await asyncio.wait_for(done.wait(), 30)
            await until(lambda: gaffer.api("GET", f"/runs/{held['id']}")["run"]["disposition"] == "backfilled", "the approved run to succeed")
            return seen

    seen = run(main())
    assert seen[0] is None
    assert (seen[1].decision, seen[1].note, seen[1].by) == ("approved", "yes, goodwill", "operator:http")
    assert gaffer.api("GET", f"/inbox?kind=needs_human&subject=run:{held_id[0]}")["items"] == []


def _all_lines(g: Gaffer, kind: str, id_: Any) -> List[Dict[str, Any]]:
    lines: List[Dict[str, Any]] = []
    after = 0
    while True:
        page = g.api("GET", f"/{kind}/{id_}/logs?after={after}&limit=1000")
        lines.extend(page["items"])
        if page["next"] is None:
            return lines
        after = page["next"]


def test_log_lines_arrive_complete_in_order_and_once_across_a_reconnect_and_a_gaffer_restart(own_gaffer: Gaffer, role: str) -> None:
    """PROTOCOL §5 "acknowledged means on disk": the SDK numbers each line (seq) and resends what
    was not acknowledged; Gaffer stores a seq once. A blip at line 2000 (the agent is back by line
    3000) and a restart at line 4000."""
    g = own_gaffer
    created = g.create_task("logs through trouble", role)
    token = g.token(role)
    total = 6000

    async def main() -> None:
        async with gaffer_agent.connect(g.agent_url, token=token, role=role, name="chatty", reconnect=FAST) as agent:
            ready: List[Any] = []
            agent.on("ready", ready.append)

            async def handle(task: Any) -> Dict[str, int]:
                loop = asyncio.get_running_loop()
                restart: Any = None
                for i in range(1, total + 1):
                    room = task.log(f"line {i}", stream="stdout")
                    if i == 2000:
                        agent._conn.drop_socket()  # frames in flight lose their replies
                    if i == 3000:  # the lines logged meanwhile waited in the outbox
                        await until(lambda: len(ready) == 1, "the reconnect after the blip")
                    if i == 4000:  # the lines logged meanwhile wait in the outbox
                        restart = loop.run_in_executor(None, lambda: (g.stop(signal.SIGTERM), g.start()))
                    else:
                        await room
                await restart
                await until(lambda: len(ready) == 2, "the agent to come back after the restart", timeout=30)
                return {"lines": total}

            assert await agent.work(handle, max_tasks=1) == 1
            assert [r["resumed"] for r in ready] == [True, True]

    run(main(), timeout=120)
    task = g.task(created["id"])
    assert (task["status"], task["attempt"]) == ("done", 1)
    lines = _all_lines(g, "tasks", created["id"])
    assert [line["text"] for line in lines] == [f"line {i}" for i in range(1, total + 1)]
    assert all(line["attempt"] == 1 and line["stream"] == "stdout" for line in lines)


def test_only_the_holder_may_log_or_report_usage(gaffer: Gaffer, role: str) -> None:
    created = gaffer.create_task("held by one", role)
    job = gaffer.api("POST", "/jobs", {"name": f"{role}-held", "role": role, "schedule": {"everyS": 86400}})["job"]

    async def main() -> None:
        async with connect(gaffer, role, "holder") as holder, connect(gaffer, role, "intruder") as intruder:
            claimed = await holder.claim()
            assert claimed is not None and claimed.task.id == created["id"]

            async def refused(type_: str, **fields: Any) -> str:
                with pytest.raises(GafferRequestError) as e:
                    await intruder.request(type_, **fields)
                return e.value.code

            lines = [{"text": "not mine to write"}]
            assert await refused("log", taskId=created["id"], lines=lines) == "not_holder"
            assert await refused("usage", taskId=created["id"], inputTokens=5) == "not_holder"
            # The holder itself with a stale fence is refused too.
            assert await refused("log", taskId=created["id"], fence=claimed.lock.fence + 1, lines=lines) == "not_holder"
            await holder.request("log", taskId=created["id"], fence=claimed.lock.fence, lines=[{"text": "mine", "seq": 1}])
            await holder.report(created["id"], claimed.lock.fence, "done")

            # A run: only the instance that acknowledged it.
            started = asyncio.Event()
            release = asyncio.Event()
            run_ids: List[str] = []

            async def job_fn(ctx: Any) -> None:
                run_ids.append(ctx.run_id)
                started.set()
                await release.wait()

            holder.on_job(job_fn)
            gaffer.api("POST", f"/jobs/{job['id']}/trigger", {"reason": "test"})
            await asyncio.wait_for(started.wait(), 20)
            assert await refused("log", runId=run_ids[0], lines=lines) == "not_holder"
            assert await refused("usage", runId=run_ids[0], costUsd=1.0) == "not_holder"
            release.set()
            await until(lambda: gaffer.api("GET", f"/runs/{run_ids[0]}")["run"]["status"] == "success", "the run to finish")

    # The intruder is connected only to try: its socket must not be the one the job goes to.
    run(main())
    assert [line["text"] for line in _all_lines(gaffer, "tasks", created["id"])] == ["mine"]
    assert gaffer.task(created["id"])["usage"] == {"inputTokens": 0, "outputTokens": 0, "costUsd": 0}
