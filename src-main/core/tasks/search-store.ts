/**
 * Finding tasks by role, status and text (title, payload text, id): the task list's search, the
 * count behind a bulk action's progress bar, and the chunks a bulk action walks.
 *
 * Invariants:
 * 1. A search reads at most `scanRows` task rows per call, walking the id order from the cursor:
 *    matching text reads every row it looks at, and a call on a million tasks must stay short
 *    (better-sqlite3 is synchronous; a long read holds up every claim). A page that stopped at
 *    that budget before `limit` matches says so (`partial`) and its cursor carries the walk on.
 * 2. A text that reads as a task id (`42`, `#42`) also matches that id; text matches titles and
 *    the payload's JSON as a case-insensitive (ASCII) substring, `%`, `_` and `\` taken literally.
 * 3. Reads only; the caller decides the transaction (a bulk chunk searches inside its write).
 */
import type { TaskStatus } from '../../common/model';
import type { TaskFilter } from '../../common/schemas';
import type { Db } from '../db/open';
import { TASK_COLUMNS, taskSelectFrom, type TaskRow } from './task-repo';

/** Rows one search call reads at most (invariant 1): a few milliseconds of LIKE. */
export const SEARCH_SCAN_ROWS = 20_000;
/** Rows a count reads at most: counting is one call per bulk action, so it may read more. */
export const COUNT_SCAN_ROWS = 200_000;

export interface ScanRequest {
  filter: TaskFilter;
  /** Only these statuses (a bulk action's); intersected with `filter.status`. */
  statuses?: readonly TaskStatus[];
  order: 'asc' | 'desc';
  /** Exclusive id bound to start from: above it (asc) or below it (desc). */
  from: number;
  /** Inclusive upper id bound (asc only): the selection as it was when a bulk action began. */
  through?: number;
  limit: number;
  scanRows?: number;
}

export interface ScanResult {
  rows: TaskRow[];
  /** Where the next call starts (a task id), or null when nothing is left to read. */
  next: number | null;
  /** The walk stopped at the scan budget before `limit` matches. */
  partial: boolean;
}

function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The id a search text names, if it reads as one (`42`, `#42`). */
export function idOfText(text: string): number | null {
  const m = /^#?(\d{1,15})$/.exec(text.trim());
  return m ? Number(m[1]) : null;
}

/** SQL conditions on `t` and their parameters for a filter. Null when nothing can match. */
function conditions(filter: TaskFilter, statuses: readonly TaskStatus[] | undefined): { sql: string[]; params: Array<string | number> } | null {
  const sql: string[] = [];
  const params: Array<string | number> = [];
  if (filter.role) {
    sql.push('t.role = ?');
    params.push(filter.role);
  }
  let wanted = statuses ? [...statuses] : null;
  if (filter.status) wanted = wanted ? wanted.filter((s) => s === filter.status) : [filter.status];
  if (wanted) {
    if (wanted.length === 0) return null;
    sql.push(`t.status IN (${wanted.map(() => '?').join(', ')})`);
    params.push(...wanted);
  }
  if (filter.q) {
    const like = likePattern(filter.q);
    const id = idOfText(filter.q);
    sql.push(`(t.title LIKE ? ESCAPE '\\' OR t.payload LIKE ? ESCAPE '\\'${id !== null ? ' OR t.id = ?' : ''})`);
    params.push(like, like, ...(id !== null ? [id] : []));
  }
  return { sql, params };
}

export class TaskSearch {
  private readonly maxIdStmt;

  constructor(private readonly db: Db) {
    this.maxIdStmt = db.prepare<[], number | null>('SELECT max(id) FROM tasks').pluck();
  }

  /** The highest task id now (0 on an empty board). */
  maxId(): number {
    return this.maxIdStmt.get() ?? 0;
  }

  /** Matching rows in id order from `from`, reading at most the scan budget (invariant 1). */
  scan(r: ScanRequest): ScanResult {
    const budget = r.scanRows ?? SEARCH_SCAN_ROWS;
    const cond = conditions(r.filter, r.statuses);
    const asc = r.order === 'asc';
    const bound = asc ? `id > ?${r.through !== undefined ? ' AND id <= ?' : ''}` : 'id < ?';
    const boundParams = asc && r.through !== undefined ? [r.from, r.through] : [r.from];
    const dir = asc ? 'ASC' : 'DESC';
    if (!cond) return { rows: [], next: null, partial: false };
    // The window: the next `budget` rows in id order. Its last id is where a partial page resumes.
    const windowEnd = this.db
      .prepare<unknown[], number>(`SELECT id FROM tasks WHERE ${bound} ORDER BY id ${dir} LIMIT 1 OFFSET ?`)
      .pluck()
      .get(...boundParams, budget - 1);
    const window = `(SELECT ${TASK_COLUMNS} FROM tasks WHERE ${bound} ORDER BY id ${dir} LIMIT ?)`;
    const where = cond.sql.length ? ` WHERE ${cond.sql.join(' AND ')}` : '';
    const rows = this.db
      .prepare<unknown[], TaskRow>(`${taskSelectFrom(window)}${where} ORDER BY t.id ${dir} LIMIT ?`)
      .all(...boundParams, budget, ...cond.params, r.limit + 1);
    if (rows.length > r.limit) {
      const page = rows.slice(0, r.limit);
      return { rows: page, next: page[page.length - 1]!.id, partial: false };
    }
    // Fewer matches than asked: the window either reached the end of the table or the budget.
    return windowEnd === undefined ? { rows, next: null, partial: false } : { rows, next: windowEnd, partial: rows.length < r.limit };
  }

  /** Matches among the first `COUNT_SCAN_ROWS` rows up to `through` (`exact` false: at least that many). */
  count(filter: TaskFilter, statuses: readonly TaskStatus[] | undefined, through: number): { count: number; exact: boolean } {
    const cond = conditions(filter, statuses);
    const beyond = this.db.prepare<[number, number], number>('SELECT id FROM tasks WHERE id <= ? ORDER BY id LIMIT 1 OFFSET ?').pluck().get(through, COUNT_SCAN_ROWS);
    if (!cond) return { count: 0, exact: beyond === undefined };
    const where = cond.sql.length ? ` WHERE ${cond.sql.join(' AND ')}` : '';
    const n = this.db
      .prepare<unknown[], number>(`SELECT count(*) FROM (SELECT id, role, status, title, payload FROM tasks WHERE id <= ? ORDER BY id LIMIT ?) t${where}`)
      .pluck()
      .get(through, COUNT_SCAN_ROWS, ...cond.params)!;
    return { count: n, exact: beyond === undefined };
  }
}
