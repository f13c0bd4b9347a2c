/**
 * The audit browser's query engine: filtering and paging over millions of rows.
 *
 * Invariants:
 * 1. Every page is index-driven. One equality filter drives the walk — `subject`, else `actor`,
 *    else `type` (several types: one walk per type, merged lazily) — over its `(column, id)`
 *    index; without one, the rowid is walked. Nothing ever sorts or scans the whole table.
 *    The subject index is the table `audit_subjects`, filled in bulk, plus a short unindexed tail.
 *    `audit_type` and `audit_actor` are partial: they leave out the high-volume lock types, which
 *    make up most rows, so a filter on one of those types — or on an instance, the only actor of
 *    lock events (`isInstanceActor`) — walks the rowid and tests the column (matches come at once).
 * 2. Time filters become id ranges: AuditLog keeps `at` non-decreasing in id order within each
 *    time segment (its invariant 6: a segment starts at a `clock.jump` row of a backward step,
 *    the only rows whose `at` is below their predecessor's), so per segment a binary search over
 *    the primary key finds the first and last id of the range (`from` inclusive, `to`
 *    exclusive). Segment starts are found through the type index (a handful of rows); without a
 *    backward step there is one segment and one range. There is no index on `at` and none is
 *    needed. A page walks its ranges in id order, so cursors work across them.
 * 3. Filters that cannot drive (a second equality filter, types under a subject or actor, an
 *    unindexed type, `text`) are applied to at most SCAN_BUDGET driven rows per page (over all
 *    its ranges). A page can therefore hold
 *    fewer than `limit` items and still have a `next` cursor (`partial: true`): the caller keeps
 *    paging, and no request can freeze the process.
 * 4. The cursor is an event id and is exclusive: `after` for ascending pages, `before` for
 *    descending ones. `next` is the last id examined, so nothing is skipped or repeated.
 * 5. Read-only: statements here never write and never hold an iterator open across an `await`.
 */
import type { AuditEvent, AuditPage } from '../../common/model';
import { auditFilterInput, auditQueryInput, type AuditFilterInput, type AuditQueryInput } from '../../common/schemas';
import { GafferError } from '../../common/errors';
import { parseOrThrow } from '../../common/validate';
import type Database from 'better-sqlite3';
import type { Db } from '../db/open';
import { auditRowToEvent, CLOCK_STEP_TYPE, type AuditRow } from './audit-store';
import type { AsWritten } from './hash-chain';
import { auditRowsAsWritten } from './stored-text';
import { isInstanceActor } from '../ids';

/** Rows a page may examine for filters that do not drive the walk (invariant 3). */
export const SCAN_BUDGET = 20_000;
export const DEFAULT_AUDIT_LIMIT = 100;

export type AuditOrder = 'asc' | 'desc';

/** A validated, normalised filter. */
export interface AuditFilter {
  types?: string[];
  actor?: string;
  subject?: string;
  fromMs?: number;
  toMs?: number;
  text?: string;
  /** Exclusive id bounds. */
  after?: number;
  before?: number;
}

export interface RawPage {
  rows: AuditRow[];
  next: number | null;
  partial: boolean;
}

/** An inclusive id interval. */
interface IdRange {
  lo: number;
  hi: number;
}

type Param = string | number;
type Statement = Database.Statement<Param[], unknown>;

interface Plan {
  /** `column = ?` streams that drive the walk; null = walk the rowid. */
  driverColumn: 'subject' | 'actor' | 'type' | null;
  driverValues: string[];
  residualSql: string[];
  residualParams: Param[];
}

const INDEX_FOR = { actor: 'audit_actor', type: 'audit_type' } as const;

/**
 * What a partial `(column, id)` index covers, read from the schema: a partial index is only
 * usable when the query repeats its WHERE term, and never for the types it leaves out.
 */
interface TypeIndex {
  usable: boolean;
  /** The index's WHERE term, repeated verbatim in the walk so the planner can use it. */
  where: string | null;
  /** Types the index leaves out (`type NOT IN (...)`). */
  excluded: ReadonlySet<string>;
}

export function readTypeIndex(db: Db, name: 'audit_type' | 'audit_actor' = 'audit_type'): TypeIndex {
  const row = db.prepare<[string], { sql: string | null }>(`SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`).get(name);
  if (!row?.sql) return { usable: false, where: null, excluded: new Set() };
  const m = /\bWHERE\s+([\s\S]+)$/i.exec(row.sql);
  if (!m) return { usable: true, where: null, excluded: new Set() };
  const where = m[1]!.trim();
  const list = /^type\s+NOT\s+IN\s*\(([^()]*)\)$/i.exec(where);
  const literals = list ? list[1]!.split(',').map((x) => x.trim()) : [];
  if (!list || !literals.every((x) => /^'[^']*'$/.test(x))) return { usable: false, where: null, excluded: new Set() };
  return { usable: true, where, excluded: new Set(literals.map((x) => x.slice(1, -1))) };
}

function toMs(v: string | number | undefined): number | undefined {
  if (v === undefined) return undefined;
  return typeof v === 'number' ? v : Date.parse(v);
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Escapes LIKE wildcards so user text matches literally (ESCAPE '\'). */
export function likePattern(text: string): string {
  return `%${escapeLike(text)}%`;
}

/** An actor or type ending in `*` is a prefix (`operator:*`, `lock.*`); its LIKE pattern, or null. */
export function prefixPattern(value: string): string | null {
  return value.endsWith('*') ? `${escapeLike(value.slice(0, -1))}%` : null;
}

export function normaliseFilter(input: AuditFilterInput | AuditQueryInput): AuditFilter {
  const { type, types, from, to, limit: _l, order: _o, ...rest } = input as AuditQueryInput;
  const all = [...new Set([...(type ? [type] : []), ...(types ?? [])])];
  const f: AuditFilter = { ...rest };
  if (all.length > 0) f.types = all;
  const fromMs = toMs(from);
  const toMsV = toMs(to);
  if (fromMs !== undefined) f.fromMs = fromMs;
  if (toMsV !== undefined) f.toMs = toMsV;
  if (f.fromMs !== undefined && f.toMs !== undefined && f.fromMs >= f.toMs) {
    throw new GafferError('bad_request', 'invalid audit filter: "from" must be before "to"');
  }
  for (const k of Object.keys(f) as Array<keyof AuditFilter>) if (f[k] === undefined) delete f[k];
  return f;
}

/**
 * SELECT of the ids of rows about any of `count` subjects with ids in a range: the bulk-filled
 * `audit_subjects` table up to `indexed_to`, then the unindexed tail (at most SUBJECT_INDEX_LAG
 * rows, AuditLog invariant 5) walked by rowid. The two id ranges are disjoint and split at the
 * same `indexed_to`, so nothing is missed or repeated even if the index moves on between reading
 * the mark and running the query. Parameters: subjectIdsParams.
 */
function subjectIdsSql(count: number): string {
  const list = new Array<string>(count).fill('?').join(',');
  return `SELECT id FROM audit_subjects WHERE subject IN (${list}) AND id BETWEEN ? AND ?
    UNION ALL SELECT id FROM audit WHERE subject IN (${list}) AND id BETWEEN ? AND ?`;
}

function subjectIdsParams(subjects: readonly string[], lo: number, hi: number, indexedTo: number): Param[] {
  return [...subjects, lo, Math.min(hi, indexedTo), ...subjects, Math.max(lo, indexedTo + 1), hi];
}

/** The oldest `limit` rows about any of `subjects`, oldest first (a run's trail), index-driven. */
export function oldestAbout(db: Db, subjects: readonly string[], limit: number): AuditRow[] {
  if (subjects.length === 0) return [];
  const indexedTo = db.prepare<[], number>('SELECT indexed_to FROM audit_subjects_progress').pluck().get()!;
  return db
    .prepare<Param[], AuditRow>(`SELECT a.* FROM audit a JOIN (${subjectIdsSql(subjects.length)} ORDER BY id LIMIT ?) s ON a.id = s.id ORDER BY a.id`)
    .all(...subjectIdsParams(subjects, 1, Number.MAX_SAFE_INTEGER, indexedTo), limit);
}

export class AuditQuery {
  private readonly cache = new Map<string, Statement>();
  private readonly maxId;
  private readonly probe;
  private readonly indexedTo;
  private readonly segmentStarts;
  private readonly typeIndex: TypeIndex;
  private readonly actorIndex: TypeIndex;

  constructor(private readonly db: Db) {
    this.maxId = db.prepare<[], { id: number | null }>('SELECT max(id) AS id FROM audit');
    this.probe = db.prepare<[number], { id: number; at: number }>('SELECT id, at FROM audit WHERE id >= ? ORDER BY id LIMIT 1');
    this.indexedTo = db.prepare<[], number>('SELECT indexed_to FROM audit_subjects_progress').pluck();
    this.typeIndex = readTypeIndex(db);
    this.actorIndex = readTypeIndex(db, 'audit_actor');
    // Invariant 2: rows whose `at` is below their predecessor's start a segment; only clock-step rows can.
    const viaIndex = this.typeIndex.usable && !this.typeIndex.excluded.has(CLOCK_STEP_TYPE);
    this.segmentStarts = db
      .prepare<[string, number, number], number>(
        `SELECT a.id FROM audit AS a ${viaIndex ? 'INDEXED BY audit_type' : ''}
         WHERE a.type = ?${viaIndex && this.typeIndex.where ? ` AND ${this.typeIndex.where}` : ''} AND a.id BETWEEN ? AND ?
           AND a.at < (SELECT p.at FROM audit AS p WHERE p.id = a.id - 1) ORDER BY a.id`,
      )
      .pluck();
  }

  /** The oldest audit rows about any of `subjects` (a run's or a task's timeline); see `oldestAbout`. */
  oldestAbout(subjects: readonly string[], limit: number): AuditRow[] {
    return oldestAbout(this.db, subjects, limit);
  }

  /** One page of events. Validates `input` (bad input → `bad_request`). */
  query(input: unknown = {}): AuditPage {
    const q = parseOrThrow(auditQueryInput, input, 'audit query');
    const page = this.page(normaliseFilter(q), q.limit ?? DEFAULT_AUDIT_LIMIT, q.order ?? 'asc');
    return { items: page.rows.map(auditRowToEvent), next: page.next === null ? null : String(page.next), partial: page.partial };
  }

  /** Matching events, counted up to `cap` driven rows: `exact` is false when the cap was reached. */
  count(input: unknown = {}, cap = 100_000): { count: number; exact: boolean } {
    const f = normaliseFilter(parseOrThrow(auditFilterInput, input, 'audit filter'));
    const ranges = this.idRanges(f);
    const plan = this.plan(f);
    // Ids are dense (AuditLog invariant 2): a pure id/time range counts itself.
    if (plan.driverColumn === null && plan.residualSql.length === 0) return { count: ranges.reduce((n, r) => n + r.hi - r.lo + 1, 0), exact: true };
    const driver = this.driver(plan, 'ASC');
    const sql = `SELECT count(*) AS n, (SELECT count(*) FROM (${driver.sql})) AS scanned FROM (${driver.sql}) AS d
      CROSS JOIN audit AS a ON a.id = d.id ${plan.residualSql.length ? `WHERE ${plan.residualSql.join(' AND ')}` : ''}`;
    let count = 0;
    let left = cap;
    for (const r of ranges) {
      const p = driver.params(r.lo, r.hi, left);
      const row = this.stmt(sql).get(...p, ...p, ...plan.residualParams) as { n: number; scanned: number };
      count += row.n;
      left -= row.scanned;
      if (left <= 0) return { count, exact: false };
    }
    return { count, exact: true };
  }

  /** Text of rows from before text was checked, as written (stored-text.ts), for a faithful export. */
  asWritten(): AsWritten {
    return auditRowsAsWritten(this.db);
  }

  /** The newest event id (0 for an empty log). */
  lastId(): number {
    return this.maxId.get()?.id ?? 0;
  }

  /** The engine behind `query` and the export: raw rows (detail as stored), already validated filter. */
  page(f: AuditFilter, limit: number, order: AuditOrder): RawPage {
    const ranges = this.idRanges(f);
    if (order === 'desc') ranges.reverse();
    const plan = this.plan(f);
    const rows: AuditRow[] = [];
    let budget = SCAN_BUDGET;
    for (let k = 0; k < ranges.length; k++) {
      const part = this.pageIn(ranges[k]!, plan, limit - rows.length, order, budget);
      rows.push(...part.rows);
      budget -= part.scanned;
      if (part.next !== null) return { rows, next: part.next, partial: rows.length < limit };
      // Full, with ranges left to walk: the next page starts after the last row.
      if (rows.length >= limit && k + 1 < ranges.length) return { rows, next: rows[rows.length - 1]!.id, partial: false };
      if (budget <= 0 && k + 1 < ranges.length) {
        const edge = order === 'asc' ? ranges[k]!.hi : ranges[k]!.lo;
        return { rows, next: edge, partial: rows.length < limit };
      }
    }
    return { rows, next: null, partial: false };
  }

  /** One page inside one id range; `scanned` is how many driven rows the residual filters used up. */
  private pageIn(r: IdRange, plan: Plan, limit: number, order: AuditOrder, budget: number): RawPage & { scanned: number } {
    const dir = order === 'asc' ? 'ASC' : 'DESC';
    const residual = plan.residualSql.length > 0;
    const driver = this.driver(plan, dir);
    // Without residual filters every driven row matches: walk limit + 1 (one more says "there is a next").
    const n = residual ? budget : limit + 1;
    const pageSql = `SELECT a.* FROM (${driver.sql}) AS d CROSS JOIN audit AS a ON a.id = d.id
      ${residual ? `WHERE ${plan.residualSql.join(' AND ')}` : ''} ORDER BY d.id ${dir} LIMIT ?`;
    const rows = this.stmt(pageSql).all(...driver.params(r.lo, r.hi, n), ...plan.residualParams, limit + 1) as AuditRow[];
    if (rows.length > limit) {
      rows.length = limit;
      return { rows, next: rows[limit - 1]!.id, partial: false, scanned: 0 };
    }
    if (!residual) return { rows, next: null, partial: false, scanned: 0 };
    // Invariant 3: the walk stopped at the scan budget; if it was cut there, resume after its edge.
    const endSql = `SELECT count(*) AS n, ${order === 'asc' ? 'max' : 'min'}(id) AS edge FROM (${driver.sql})`;
    const end = this.stmt(endSql).get(...driver.params(r.lo, r.hi, n)) as { n: number; edge: number | null };
    if (end.n >= n && end.edge !== null) return { rows, next: end.edge, partial: rows.length < limit, scanned: end.n };
    return { rows, next: null, partial: false, scanned: end.n };
  }

  private plan(f: AuditFilter): Plan {
    const plan: Plan = { driverColumn: null, driverValues: [], residualSql: [], residualParams: [] };
    if (f.subject !== undefined) {
      plan.driverColumn = 'subject';
      plan.driverValues = [f.subject];
    } else if (f.actor !== undefined && prefixPattern(f.actor) === null && this.actorIndex.usable && (this.actorIndex.excluded.size === 0 || !isInstanceActor(f.actor))) {
      plan.driverColumn = 'actor';
      plan.driverValues = [f.actor];
    } else if (f.types && this.typeIndex.usable && f.types.every((t) => prefixPattern(t) === null && !this.typeIndex.excluded.has(t))) {
      plan.driverColumn = 'type';
      plan.driverValues = f.types;
    }
    // A prefix (`operator:*`, `lock.*`) never drives: it is tested on the driven rows.
    if (f.actor !== undefined && plan.driverColumn !== 'actor') {
      const prefix = prefixPattern(f.actor);
      plan.residualSql.push(prefix === null ? 'a.actor = ?' : `a.actor LIKE ? ESCAPE '\\'`);
      plan.residualParams.push(prefix ?? f.actor);
    }
    if (f.types && plan.driverColumn !== 'type') {
      const exact = f.types.filter((t) => prefixPattern(t) === null);
      const prefixes = f.types.map(prefixPattern).filter((p): p is string => p !== null);
      const terms = [...(exact.length ? [`a.type IN (${exact.map(() => '?').join(',')})`] : []), ...prefixes.map(() => `a.type LIKE ? ESCAPE '\\'`)];
      plan.residualSql.push(terms.length === 1 ? terms[0]! : `(${terms.join(' OR ')})`);
      plan.residualParams.push(...exact, ...prefixes);
    }
    if (f.text !== undefined) {
      plan.residualSql.push(`a.detail LIKE ? ESCAPE '\\'`);
      plan.residualParams.push(likePattern(f.text));
    }
    return plan;
  }

  /**
   * SQL yielding the ids of the walk, in order, at most `n` of them inside [lo, hi].
   * Several driver values (types) are walked separately and merged, each walk bounded.
   */
  private driver(plan: Plan, dir: 'ASC' | 'DESC'): { sql: string; params: (lo: number, hi: number, n: number) => Param[] } {
    if (plan.driverColumn === null) {
      return {
        sql: `SELECT id FROM audit WHERE id BETWEEN ? AND ? ORDER BY id ${dir} LIMIT ?`,
        params: (lo, hi, n) => [lo, hi, n],
      };
    }
    if (plan.driverColumn === 'subject') return this.subjectDriver(plan.driverValues[0]!, dir);
    // Each stream walks its (column, id) index in id order; several streams are merged lazily
    // (MERGE UNION ALL, no sort), so the LIMIT stops the walk early.
    const col = plan.driverColumn;
    const where = col === 'type' ? this.typeIndex.where : col === 'actor' ? this.actorIndex.where : null;
    const partial = where ? ` AND ${where}` : '';
    const one = `SELECT id FROM audit INDEXED BY ${INDEX_FOR[col]} WHERE ${col} = ?${partial} AND id BETWEEN ? AND ?`;
    const values = plan.driverValues;
    return {
      sql: `${values.map(() => one).join(' UNION ALL ')} ORDER BY id ${dir} LIMIT ?`,
      params: (lo, hi, n) => [...values.flatMap((v) => [v, lo, hi]), n],
    };
  }

  /** A subject's ids in [lo, hi], through the subject index (see subjectIdsSql). */
  private subjectDriver(subject: string, dir: 'ASC' | 'DESC'): { sql: string; params: (lo: number, hi: number, n: number) => Param[] } {
    const indexedTo = this.indexedTo.get()!;
    return {
      sql: `${subjectIdsSql(1)} ORDER BY id ${dir} LIMIT ?`,
      params: (lo, hi, n) => [...subjectIdsParams([subject], lo, hi, indexedTo), n],
    };
  }

  /** The id ranges (inclusive, ascending) matching the cursor bounds and the time filter, if any. */
  private idRanges(f: AuditFilter): IdRange[] {
    const max = this.lastId();
    const lo = Math.max(1, (f.after ?? 0) + 1);
    const hi = Math.min(max, f.before !== undefined ? f.before - 1 : max);
    if (lo > hi) return [];
    if (f.fromMs === undefined && f.toMs === undefined) return [{ lo, hi }];
    // Invariant 2: within a segment `at` is non-decreasing, so each time bound is one binary search.
    const starts = this.segmentStarts.all(CLOCK_STEP_TYPE, lo + 1, hi);
    const out: IdRange[] = [];
    for (let k = 0; k <= starts.length; k++) {
      const segLo = k === 0 ? lo : starts[k - 1]!;
      const segHi = k === starts.length ? hi : starts[k]! - 1;
      const a = f.fromMs !== undefined ? this.firstAtLeast(f.fromMs, segLo, segHi) : segLo;
      const b = f.toMs !== undefined ? this.firstAtLeast(f.toMs, a, segHi) - 1 : segHi;
      if (a <= b) out.push({ lo: a, hi: b });
    }
    return out;
  }

  /** Smallest id in [lo, hi] whose `at` >= t (hi + 1 if none). */
  private firstAtLeast(t: number, lo: number, hi: number): number {
    let l = lo;
    let h = hi + 1;
    while (l < h) {
      const mid = Math.floor((l + h) / 2);
      const row = this.probe.get(mid);
      if (!row || row.id > hi) h = mid;
      else if (row.at >= t) h = mid;
      else l = row.id + 1;
    }
    return l;
  }

  private stmt(sql: string): Statement {
    let s = this.cache.get(sql);
    if (!s) {
      if (this.cache.size >= 256) this.cache.delete(this.cache.keys().next().value!);
      s = this.db.prepare<Param[], unknown>(sql);
      this.cache.set(sql, s);
    }
    return s;
  }
}

export type { AuditEvent };
