/**
 * A `.cpuprofile` (V8's sampling profile, as `--cpu-prof` or the inspector writes it) read for
 * walking: the profile, its nodes by id, and each node's parent (the file lists children only).
 */
import fs from 'node:fs';

export function readCpuProfile(file) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return { profile, byId, parent };
}
