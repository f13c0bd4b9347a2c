/** The hub's one read of the database. SQL only, no rules. */
import type { Db } from '../db/open';

/** An instance's status and how many locks it holds: its load when an offer is placed (`pick`). */
export interface InstanceLoad {
  status: string;
  held: number;
}

/**
 * Instances' loads as one caller read them (null: no such instance), filled by the hub's `pick` on
 * first need and kept by the caller for as long as they cannot change under it — the jobs engine,
 * one synchronous pass (locks and statuses change only by what the sockets and timers deliver
 * between passes). A burst of a thousand triggers reads each candidate instance once, not once per
 * trigger.
 */
export type InstanceLoads = Map<string, InstanceLoad | null>;

/** An instance's status and how many locks it holds (presence reports them), prepared once when the hub is built. */
export function prepareInstanceLoad(db: Pick<Db, 'prepare'>) {
  return db.prepare<[string, string], InstanceLoad>(
    'SELECT status, (SELECT count(*) FROM locks WHERE instance_id = ?) AS held FROM instances WHERE id = ?',
  );
}
