/** Read models over `instances` for the console and `GET /status`: counts by status and by role. Read-only. */
import type { InstanceStatus } from '../../common/model';
import type { Db } from '../db/open';

export type InstanceReads = ReturnType<typeof prepareInstanceReads>;

export function prepareInstanceReads(db: Db) {
  const q = {
    byStatus: db.prepare<[], { status: InstanceStatus; n: number }>('SELECT status, count(*) AS n FROM instances GROUP BY status'),
    online: db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM instances WHERE status = 'online'`),
    onlineByRole: db.prepare<[], { role: string; n: number }>(`SELECT role, count(*) AS n FROM instances WHERE status = 'online' GROUP BY role`),
  };
  return {
    countsByStatus: () => q.byStatus.all(),
    online: (): number => q.online.get()!.n,
    onlineByRole: () => q.onlineByRole.all(),
  };
}
