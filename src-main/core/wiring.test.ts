import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCore } from './create-core';
import { CoreWiringError, Late, sealAll } from './wiring';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a contribution filled late (core/wiring.ts)', () => {
  it('left unfilled, fails the seal naming who needs what', () => {
    const gate = new Late<(role: string) => boolean>('a claim gate', 'the task board');
    expect(() => sealAll([gate])).toThrow(new CoreWiringError('the task board needs a claim gate, and no module provided it'));
  });

  it('is refused before the seal, and a second provider is refused', () => {
    const gate = new Late<(role: string) => boolean>('a claim gate', 'the task board');
    gate.provide(() => true, 'the jobs module');
    expect(() => gate.get()).toThrow(CoreWiringError);
    expect(() => gate.provide(() => false, 'the budgets')).toThrow(/provided twice: by the jobs module and by the budgets/);
    gate.seal();
    expect(gate.get()('dev')).toBe(true);
  });
});

describe('createCore', () => {
  it('fails at start when a module does not provide its contribution (no silent no-op default)', () => {
    // The jobs module and the budgets "forget" the claim gate: with a no-op default, paused roles
    // and reached spend caps would silently hand out tasks again.
    const provide = Late.prototype.provide;
    vi.spyOn(Late.prototype, 'provide').mockImplementation(function (this: Late<unknown>, value, by) {
      if (this.neededBy !== 'the task board') provide.call(this, value, by);
    });
    expect(() => createCore({ dbPath: ':memory:', logs: { inline: true } })).toThrow(
      new CoreWiringError('the task board needs a claim gate (role pauses, daily spend caps), and no module provided it'),
    );
  });

  it('assembles with every contribution filled', () => {
    const core = createCore({ dbPath: ':memory:', logs: { inline: true } });
    try {
      const inst = core.instances.register({ role: 'dev', name: 'a' });
      core.jobs.pauses.pauseRole('dev', { actor: 'operator:test', reason: 'maintenance' });
      core.tasks.create({ title: 't', role: 'dev' }, { actor: 'operator:test' });
      // The jobs module's pause reaches the task board through the contributed claim gate.
      expect(core.locks.claim({ instanceId: inst.id }).task).toBeNull();
    } finally {
      core.close();
    }
  });
});
