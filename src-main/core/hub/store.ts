/** The hub's one read of the database. SQL only, no rules. */
import type { Db } from '../db/open';

/** An instance's status and how many locks it holds (presence reports them), prepared once when the hub is built. */
export function prepareInstanceLoad(db: Pick<Db, 'prepare'>) {
  return db.prepare<[string, string], { status: string; held: number }>(
    'SELECT status, (SELECT count(*) FROM locks WHERE instance_id = ?) AS held FROM instances WHERE id = ?',
  );
}
