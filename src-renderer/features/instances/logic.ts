/** Pure logic of the Instances view: filtering and ordering instances, the token form. */
import type { InstanceView } from '../../../src-main/common/console-api';
import type { InstanceStatus } from '../../../src-main/common/model';
import { roleProblem } from '../../lib/roles';

export type StatusFilter = 'live' | InstanceStatus | 'all';

export function filterInstances(list: InstanceView[], status: StatusFilter, text: string): InstanceView[] {
  const f = text.trim().toLowerCase();
  const order: Record<string, number> = { online: 0, disconnected: 1, offline: 2 };
  return list
    .filter((i) => (status === 'all' ? true : status === 'live' ? i.status !== 'offline' : i.status === status))
    .filter((i) => !f || `${i.name} ${i.id} ${i.role} ${i.version ?? ''}`.toLowerCase().includes(f))
    .sort((a, b) => (order[a.status] ?? 3) - (order[b.status] ?? 3) || a.role.localeCompare(b.role) || a.name.localeCompare(b.name));
}

export function validateTokenForm(name: string, role: string): { name?: string; role?: string } {
  const e: { name?: string; role?: string } = {};
  if (!name.trim()) e.name = 'A name is required (e.g. “dev laptop worker”).';
  else if (name.trim().length > 200) e.name = 'At most 200 characters.';
  const bad = role.trim() ? roleProblem(role.trim()) : null;
  if (bad) e.role = bad;
  return e;
}

