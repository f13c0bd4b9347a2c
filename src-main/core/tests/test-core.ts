/** Test helpers: a core on a temp directory with a manual clock. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../common/clock';
import { GafferError } from '../../common/errors';
import type { SchedulerConfig } from '../../common/config';
import { createCore, type Core } from '../create-core';

export interface TestCore extends Core {
  clock: ManualClock;
  dir: string;
}

export function tempDir(prefix = 'gaffer-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function makeTestCore(config: Partial<SchedulerConfig> = {}, dir = tempDir()): TestCore {
  const clock = new ManualClock();
  const core = createCore({ clock, dataDir: dir, config });
  return Object.assign(core, { clock, dir }) as TestCore;
}

/** A digest of every state table (not the audit log), to prove that a refused call changed nothing. */
export function stateDigest(core: Core): string {
  const tables = ['tasks', 'task_deps', 'locks', 'lock_expiries', 'instances', 'idempotency', 'tokens'];
  return tables.map((t) => JSON.stringify(core.db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all())).join('\n');
}

export function auditCount(core: Core): number {
  return core.audit.count();
}

/** The GafferError `fn` throws, or undefined when it returns; anything else is rethrown. */
function gafferErrorThrown(fn: () => unknown): GafferError | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof GafferError) return e;
    throw e;
  }
  return undefined;
}

/** The code of the GafferError `fn` throws ("no error" when it returns); anything else is rethrown. */
export function errorCodeOf(fn: () => unknown): string {
  return gafferErrorThrown(fn)?.code ?? 'no error';
}

/** The GafferError `fn` throws; fails the test when it returns. */
export function errorOf(fn: () => unknown): GafferError {
  const e = gafferErrorThrown(fn);
  if (!e) throw new Error('expected a GafferError');
  return e;
}

export function onlineInstance(core: Core, role = 'dev', name = 'agent'): string {
  return core.instances.register({ role, name }).id;
}
