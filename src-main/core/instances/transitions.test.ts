/** The instance status machine: its edges, the refusals, and the invariant checker's replay. */
import { afterEach, describe, expect, it } from 'vitest';
import { checkInvariants } from '../tests/invariants';
import { makeTestCore, onlineInstance, type TestCore } from '../tests/test-core';
import { allInstanceEdges, assertInstanceEdge } from './transitions';

let core: TestCore | undefined;
afterEach(() => {
  core?.close();
  core = undefined;
});

const edges = (list: Array<{ cause: string; from: string | null; to: string }>) => list.map((e) => `${e.cause}:${e.from ?? '∅'}→${e.to}`).sort();

describe('instance status machine', () => {
  it('has exactly the edges the registry documents; offline is final', () => {
    expect(edges(allInstanceEdges())).toEqual(
      ['hello:∅→online', 'resume:disconnected→online', 'resume:online→online', 'disconnect:online→disconnected', 'offline:online→offline', 'offline:disconnected→offline'].sort(),
    );
    expect(() => assertInstanceEdge('resume', 'offline', 'online')).toThrow(expect.objectContaining({ code: 'invalid_transition' }));
  });

  it('every change is audited with from/to, and the checker replays them', () => {
    core = makeTestCore();
    const id = onlineInstance(core, 'dev', 'a');
    core.instances.disconnect(id, 'socket closed');
    core.instances.goOffline(id, 'disconnected');
    const trail = core.db.prepare(`SELECT type, detail FROM audit WHERE subject = ? ORDER BY id`).all(`instance:${id}`) as Array<{ type: string; detail: string }>;
    expect(trail.map((r) => [r.type, JSON.parse(r.detail).from, JSON.parse(r.detail).to])).toEqual([
      ['instance.hello', null, 'online'],
      ['instance.disconnect', 'online', 'disconnected'],
      ['instance.offline', 'disconnected', 'offline'],
    ]);
    expect(checkInvariants(core.db)).toEqual([]);
    core.audit.record({ type: 'instance.resume', actor: 'mallory', subject: `instance:${id}`, detail: { from: 'offline', to: 'online' } });
    expect(checkInvariants(core.db)).toEqual([expect.stringMatching(`instance:${id}: illegal instance resume offline → online`)]);
  });
});
