/** `GET /status`: health, version, counts and the recovery bound (SPEC §2). */
import { recoveryBoundS } from '../../common/config';
import { INSTANCE_STATUSES, TASK_STATUSES, type InstanceStatus, type TaskStatus } from '../../common/model';
import type { StatusInfo } from '../../common/ops/status';
import { PROTOCOL_VERSION } from '../../common/protocol';
import type { Core } from '../../core/create-core';
import { opRoute, withDoc } from './define-route';
import { emptyQuery, ok, parseQuery, type Route } from './router';

export type { StatusInfo } from '../../common/ops/status';


export function statusRoutes(core: Core, version: string): Route[] {
  const { reads } = core;
  return [
    {
      ...withDoc(opRoute('status.get'), { query: emptyQuery }),
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
