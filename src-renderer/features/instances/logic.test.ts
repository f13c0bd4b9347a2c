import { describe, expect, it } from 'vitest';
import type { InstanceView } from '../../../src-main/common/console-api';
import { filterInstances, validateTokenForm } from './logic';

const inst = (id: string, status: InstanceView['status'], role = 'dev', name = id): InstanceView => ({
  id,
  role,
  name,
  version: null,
  status,
  connectedAt: '',
  lastHeartbeatAt: '',
  disconnectedAt: null,
  tokenId: null,
  heldTaskIds: [],
  held: [],
  lostLocks: [],
  currentRuns: [],
});

describe('instances view logic', () => {
  const list = [inst('c', 'offline'), inst('b', 'disconnected'), inst('a', 'online', 'pm'), inst('d', 'online', 'dev', 'worker-9')];
  it('shows connected instances first by default, online before disconnected', () => {
    expect(filterInstances(list, 'live', '').map((i) => i.id)).toEqual(['d', 'a', 'b']);
    expect(filterInstances(list, 'all', '').map((i) => i.id)).toEqual(['d', 'a', 'b', 'c']);
    expect(filterInstances(list, 'offline', '').map((i) => i.id)).toEqual(['c']);
    expect(filterInstances(list, 'all', 'WORKER').map((i) => i.id)).toEqual(['d']);
    expect(filterInstances(list, 'all', 'pm').map((i) => i.id)).toEqual(['a']);
  });

  it('validates the token form at the field', () => {
    expect(validateTokenForm('laptop', '')).toEqual({});
    expect(validateTokenForm(' ', 'dev')).toHaveProperty('name');
    expect(validateTokenForm('x', 'bad role')).toHaveProperty('role');
  });
});
