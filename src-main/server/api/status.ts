/** `GET /status`: health, version, counts and the recovery bound (SPEC §2). */
import { recoveryBoundS } from '../../common/config';
import type { LogRefusal } from '../../common/logs';
import { INSTANCE_STATUSES, TASK_STATUSES, type InstanceStatus, type StorageStatus, type TaskStatus } from '../../common/model';
import { PROTOCOL_VERSION } from '../../common/protocol';
import type { Core } from '../../core/create-core';
import { emptyQuery, ok, parseQuery, type Route } from './router';

export interface StatusInfo {
  /** False while writes are refused (see `storage`). */
  ok: boolean;
  /** Addition: why writes are refused (a storage fault, or a disk that refuses writes), or null. */
  storage: StorageStatus | null;
  /** Addition: why agents' log lines are refused right now (the disk reached its free-space floor), or null. Does not make `ok` false: the scheduler itself still writes. */
  logs: { refusing: LogRefusal | null };
  version: string;
  protocolVersion: number;
  serverTime: string;
  /** Start of "today" (server's local zone) used for `expiredToday`. */
  todayStart: string;
  counts: {
    onlineInstances: number;
    instances: Record<InstanceStatus, number>;
    tasks: Record<TaskStatus, number>;
    liveLocks: number;
    expiredToday: number;
    signals: number;
    auditEvents: number;
  };
  /** min(lock window, heartbeat timeout) + sweep interval: how long an abandoned task can stay stuck. */
  recoveryBoundS: number;
  config: Core['config'];
}

export function statusRoutes(core: Core, version: string): Route[] {
  const { reads } = core;
  return [
    {
      method: 'GET',
      path: '/status',
      doc: {
        summary: 'Health, version and counts: instances by status, tasks by status, live locks, locks expired today, the recovery bound.',
        query: emptyQuery,
        responses: { 200: 'the status object' },
      },
      handler(c) {
        parseQuery(emptyQuery, c);
        const now = core.clock.now();
        const today = new Date(now);
        today.setHours(0, 0, 0, 0);
        const tasks = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
        for (const r of reads.tasks.countsByStatus()) tasks[r.status] = r.n;
        const instances = Object.fromEntries(INSTANCE_STATUSES.map((s) => [s, 0])) as Record<InstanceStatus, number>;
        for (const r of reads.instances.countsByStatus()) instances[r.status] = r.n;
        const storage = core.storageStatus();
        const body: StatusInfo = {
          ok: storage === null,
          storage,
          logs: { refusing: core.logs.refusing() },
          version,
          protocolVersion: PROTOCOL_VERSION,
          serverTime: new Date(now).toISOString(),
          todayStart: today.toISOString(),
          counts: {
            onlineInstances: instances.online,
            instances,
            tasks,
            liveLocks: reads.tasks.liveLocks(),
            expiredToday: reads.tasks.expiredSince(today.getTime()),
            signals: reads.signals.count(),
            auditEvents: core.auditQuery.lastId(),
          },
          recoveryBoundS: recoveryBoundS(core.config),
          config: core.config,
        };
        return ok(body);
      },
    },
  ];
}
