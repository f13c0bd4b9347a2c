/**
 * Starting the managed agents of a running Gaffer: both shells call `startManagedAgents` once the
 * local server listens (the processes need its agent URL) and `stop` before closing the server
 * (so the tasks the agents hand back still reach it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Core } from '../../core/create-core';
import { ownerKeyFor, type SupervisorTiming } from '../../core/managed';
import type { RunningServer } from '../server';
import { launchPaths, type LaunchPaths } from './launch';
import { NodeProcessSpawner } from './spawner';

export interface ManagedAgentsOptions {
  /** Where scripts/gaffer.mjs and scripts/managed-shim.mjs live (default: this checkout). */
  paths?: Partial<LaunchPaths>;
  timing?: Partial<SupervisorTiming>;
  /** The user's umask (Gaffer runs with 077): the agents' commands get it back (scripts/lib/umask.mjs). */
  userUmask?: number;
}

/**
 * This checkout's root: the nearest folder up from this module that holds `scripts/gaffer.mjs`.
 * Walked, not counted: the module runs from the sources (src-main/server/managed), from the
 * headless bundle (out/headless) and from the Electron build (out/main), at different depths.
 */
export function sourceRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = here; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'scripts', 'gaffer.mjs'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(here, '..', '..', '..');
  }
}

export async function startManagedAgents(core: Core, server: Pick<RunningServer, 'agentUrl'>, opts: ManagedAgentsOptions = {}): Promise<{ stop(): Promise<void> }> {
  // The data directory is hidden from sandboxed commands (PROTOCOL §15).
  const dataDir = core.dbPath === ':memory:' ? {} : { dataDir: path.dirname(core.dbPath) };
  const paths = { ...launchPaths(sourceRoot(), process.execPath), ...dataDir, ...opts.paths };
  await core.managed.attach({
    // The agents run below Gaffer's CPU priority (the setting `--agent-nice`; spawner.ts invariant 5).
    spawner: new NodeProcessSpawner(paths, process.env, opts.userUmask, {}, core.config.agentNice),
    agentUrl: server.agentUrl,
    ownerKey: ownerKeyFor(core.dbPath),
    ...(opts.timing ? { timing: opts.timing } : {}),
  });
  return { stop: () => core.managed.detach() };
}
