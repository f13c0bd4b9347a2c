/**
 * docs/protocol.md from the outside: its §12 Python agent (the listing itself, extracted from the
 * document) and a Python client written from the document alone, run by Debian's python3 (with
 * `websockets`) against a real hub. Skipped, saying why, where that Python is missing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../core/tests/test-core';
import { startHarness, trackSockets, until, type Harness } from './tests/agent-socket.testkit';

const PYTHON = '/usr/bin/python3';
const DOC = path.join(__dirname, '../../docs/protocol.md');
const pythonMissing = spawnSync(PYTHON, ['-c', 'import websockets'], { stdio: 'ignore' }).status !== 0;

/** The first ```python block after the heading "## 12." of docs/protocol.md. */
function exampleAgent(): string {
  const doc = fs.readFileSync(DOC, 'utf8');
  const section = doc.slice(doc.indexOf('\n## 12.'));
  const m = /```python\n([\s\S]*?)\n```/.exec(section);
  if (!m) throw new Error('no Python listing in §12 of docs/protocol.md');
  return m[1]!;
}

/**
 * Loads the listing as a module, replaces `do_the_work` with one that finishes when the test
 * creates GO_FILE, and runs `Agent().run()`. It exits when its stdin closes (the test is gone).
 */
const DRIVER = String.raw`
import asyncio, importlib.util, os, sys, threading

def parent_gone():
    sys.stdin.read()
    os._exit(0)

threading.Thread(target=parent_gone, daemon=True).start()
spec = importlib.util.spec_from_file_location("example_agent", sys.argv[1])
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)
GO = os.environ["GO_FILE"]

async def gated_work(task):
    print(f"working on task {task['id']}", flush=True)
    while not os.path.exists(GO):
        await asyncio.sleep(0.02)
    return "done", f'finished {task["title"]}'

example.do_the_work = gated_work
asyncio.run(example.Agent().run())
`;

const children: ChildProcess[] = [];
let h: Harness | undefined;
afterEach(async () => {
  for (const c of children.splice(0)) {
    try {
      process.kill(-c.pid!, 'SIGKILL'); // its whole process group
    } catch {
      /* already gone */
    }
  }
  await h?.close();
  h = undefined;
});

function python(script: string, args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(PYTHON, ['-c', script, ...args], { detached: true, stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', ...env } });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  return { child, output: () => out };
}


async function startExample(x: Harness) {
  const dir = tempDir('gaffer-pyagent-');
  const file = path.join(dir, 'agent.py');
  fs.writeFileSync(file, exampleAgent());
  const go = path.join(dir, 'go');
  const p = python(DRIVER, [file], { GAFFER_URL: x.url, GAFFER_TOKEN: x.token('dev'), GO_FILE: go });
  const instanceId = await until(() => x.core.hub.sessions().find((s) => s.state === 'ready')?.instanceId, `the example agent's hello (${p.output()})`, 20_000);
  return { ...p, instanceId, go: () => fs.writeFileSync(go, '') };
}

const lockRows = (x: Harness, taskId: number) =>
  x.core.db
    .prepare(`SELECT type, actor, json_extract(detail, '$.fence') AS fence, json_extract(detail, '$.to') AS "to" FROM audit WHERE subject = ? AND type LIKE 'lock.%' ORDER BY id`)
    .all(`task:${taskId}`) as Array<{ type: string; actor: string; fence: number; to: string | null }>;

describe.skipIf(pythonMissing)('the §12 Python agent of docs/protocol.md (needs /usr/bin/python3 with websockets; skipped without it)', () => {
  it('a claim whose reply is lost in a blip is handed back at once, not held for the 2 h lock window', async () => {
    h = await startHarness();
    const x = h;
    const sockets = trackSockets(x);
    const task = x.core.tasks.create({ title: 'lost reply', role: 'dev' }, { actor: 'test' }).task;
    // The first claim commits, then the connection drops before its reply leaves.
    const once = x.core.events.on('task.claimed', () => {
      once.dispose();
      for (const s of sockets) s.destroy();
    });
    const agent = await startExample(x);
    agent.go();
    await until(() => x.core.tasks.get(task.id).status === 'done', `the task done (${agent.output()})`, 30_000);
    const rows = lockRows(x, task.id);
    expect(rows).toContainEqual({ type: 'lock.release', actor: agent.instanceId, fence: 1, to: 'backlog' });
    expect(rows.at(-1)).toEqual({ type: 'lock.release', actor: agent.instanceId, fence: 2, to: 'done' });
    expect(x.core.instances.get(agent.instanceId).status).toBe('online'); // it resumed the same instance
  }, 40_000);

  it('a blip in the middle of a task: it resumes, finishes and reports on the new socket', async () => {
    h = await startHarness();
    const x = h;
    const sockets = trackSockets(x);
    const task = x.core.tasks.create({ title: 'long work', role: 'dev' }, { actor: 'test' }).task;
    const agent = await startExample(x);
    // The blip comes once the agent works on the task (its claim reply arrived), not merely once
    // the claim committed: a reply lost in the blip is the first case above.
    await until(() => agent.output().includes(`working on task ${task.id}`), `the work starting (${agent.output()})`);
    const first = x.core.hub.sessions()[0]!.sessionId;
    for (const s of sockets) s.destroy();
    await until(() => x.core.hub.sessions().find((s) => s.state === 'ready' && s.sessionId !== first), `the resume (${agent.output()})`, 20_000);
    agent.go();
    await until(() => x.core.tasks.get(task.id).status === 'done', `the report (${agent.output()})`, 20_000);
    expect(lockRows(x, task.id), `the agent said: ${agent.output()}`).toEqual([
      { type: 'lock.claim', actor: agent.instanceId, fence: 1, to: null },
      { type: 'lock.release', actor: agent.instanceId, fence: 1, to: 'done' },
    ]);
  }, 40_000);

  it('lock_lost stops the work at once: nothing is reported for the lock taken away', async () => {
    h = await startHarness();
    const x = h;
    const task = x.core.tasks.create({ title: 'taken away', role: 'dev' }, { actor: 'test' }).task;
    const agent = await startExample(x);
    await until(() => x.core.tasks.get(task.id).lock, 'the claim');
    x.core.tasks.forceRelease({ taskId: task.id, reason: 'reassigning', actor: 'operator:test' });
    // Its work loop goes on to the next claim: the same task, now attempt 2.
    await until(() => x.core.tasks.get(task.id).lock?.fence === 2, `the second claim (${agent.output()})`, 20_000);
    agent.go();
    await until(() => x.core.tasks.get(task.id).status === 'done', 'the report');
    expect(lockRows(x, task.id).filter((r) => r.actor === agent.instanceId)).toEqual([
      { type: 'lock.claim', actor: agent.instanceId, fence: 1, to: null },
      { type: 'lock.claim', actor: agent.instanceId, fence: 2, to: null },
      { type: 'lock.release', actor: agent.instanceId, fence: 2, to: 'done' },
    ]);
  }, 40_000);
});

/** A client written from docs/protocol.md alone: the rules of issue 11 point 11, checked over the wire. */
const PROBE = String.raw`
import asyncio, json, os, websockets

async def main():
    out = {}
    async with websockets.connect(os.environ["GAFFER_URL"], extra_headers={"Authorization": "Bearer " + os.environ["GAFFER_TOKEN"]}) as ws:
        async def req(frame):
            await ws.send(json.dumps(frame))
            while True:
                msg = json.loads(await ws.recv())
                if "ok" in msg and msg["id"] in (frame.get("id"), None):
                    return msg
        hello = await req({"id": 1, "type": "hello", "role": "dev", "name": "probe"})
        out["heartbeatTimeoutS"] = hello["result"].get("heartbeatTimeoutS")
        bad = await req({"id": 2, "type": "run_result", "runId": "run_x", "outcome": "success", "errorClass": "fatal"})
        out["successWithErrorClass"] = bad["error"]["code"]
        claim = await req({"id": 3, "type": "claim"})
        report = await req({"id": 4, "type": "report", "taskId": claim["result"]["task"]["id"], "fence": claim["result"]["lock"]["fence"], "status": "done"})
        out["reportReplayed"] = report["result"].get("replayed")
        big = await req({"type": "report", "taskId": 1, "fence": 1, "status": "done", "note": "x" * 300000, "id": "big-1"})
        out["tooLarge"] = [big["id"], big["error"]["code"]]
    print(json.dumps(out))

asyncio.run(main())
`;

describe.skipIf(pythonMissing)('an independent Python client (needs /usr/bin/python3 with websockets; skipped without it)', () => {
  it('sees heartbeatTimeoutS, a refused success-with-errorClass, replayed on report, and its id on too_large', async () => {
    h = await startHarness();
    const x = h;
    x.core.tasks.create({ title: 'probe', role: 'dev' }, { actor: 'test' });
    const p = python(PROBE, [], { GAFFER_URL: x.url, GAFFER_TOKEN: x.token('dev') });
    const code = await new Promise<number | null>((resolve) => p.child.on('exit', resolve));
    expect(code, p.output()).toBe(0);
    expect(JSON.parse(p.output().trim().split('\n').at(-1)!)).toEqual({
      heartbeatTimeoutS: 120,
      successWithErrorClass: 'bad_request',
      reportReplayed: false,
      tooLarge: ['big-1', 'too_large'],
    });
  }, 30_000);
});
