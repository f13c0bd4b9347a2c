/**
 * The words the console's job editor uses for each setting and each policy value, in one table:
 * the editor labels its fields and options with them, and every validation message names a
 * setting or a policy by them (never by its wire id such as `fold_into_next`), so what a message
 * says is what the operator sees on screen. The issue's `field` keeps the wire path for API callers.
 */

export const MISSED_WINDOW_LABELS = {
  run_now: 'Run now (within a tolerance)',
  fold_into_next: 'Fold into the next run',
  skip_and_alert: 'Skip and alert',
} as const;

export const OVERLAP_LABELS = {
  skip: 'skip the new slot (recorded)',
  queue_one: 'queue one',
  allow: 'allow both',
} as const;

export const CALENDAR_POLICY_LABELS = {
  skip: 'skip the slot',
  next_workday: 'move it to the next workday',
} as const;

export const DST_GAP_LABELS = {
  shift_forward: 'shift forward to the end of the gap',
  skip: 'skip the slot (recorded)',
} as const;

export const BACKOFF_LABELS = {
  fixed: 'fixed',
  exponential: 'exponential (doubles)',
} as const;

/** A policy value as a message quotes it: “Skip and alert”. */
export function quoted(label: string): string {
  return `“${label}”`;
}

/** A calendar policy set on a job without a calendar (said once, by whichever check sees it first). */
export function calendarPolicyWithoutCalendar(policy: keyof typeof CALENDAR_POLICY_LABELS): string {
  return `${quoted(CALENDAR_POLICY_LABELS[policy])} is chosen for non-workdays but the job has no calendar, so there are none to ${policy === 'skip' ? 'skip' : 'move'}`;
}

/** Field labels as the editor shows them (the dotted wire paths of job settings); the editor labels its fields from here. */
const FIELD_LABELS: Record<string, string> = {
  name: 'Name',
  role: 'Role',
  description: 'Description',
  enabled: 'Enabled',
  schedule: 'Schedule',
  'schedule.cron': 'Cron (5 fields)',
  'schedule.everyS': 'Every (seconds)',
  'schedule.timezone': 'Time zone',
  window: 'Execution window',
  'window.start': 'Opens',
  'window.end': 'Closes',
  'window.recheckEveryS': 'Re-check every (s)',
  calendar: 'Calendar',
  'calendar.timezone': 'Calendar time zone',
  calendarPolicy: 'On a non-workday',
  preconditions: 'Preconditions',
  executionConditions: 'Execution conditions',
  'executionConditions.maxConcurrentPerRole': 'Role quota',
  'executionConditions.maintenanceWindows': 'Maintenance windows',
  retry: 'Retry',
  'retry.maxAttempts': 'Attempts in total',
  'retry.firstDelayS': 'First delay (s)',
  'retry.backoff': 'Backoff',
  missedWindow: 'When a slot could not start in time',
  toleranceS: 'Tolerance (s)',
  overlap: 'If the previous run is still going',
  payload: 'Payload (JSON)',
  dstGapPolicy: 'A local time that does not exist',
  backfillCapPerTick: 'Backfills per tick',
  runTimeoutS: 'Attempt deadline (s)',
  budget: 'Spend cap per run',
  'budget.maxCostUsdPerRun': 'Dollars per run',
  'budget.maxTokensPerRun': 'Tokens per run',
};

/** Precondition fields by kind (`check` is "Ready when" for a file, the precheck's name for an agent). */
const PRECONDITION_LABELS: Record<string, Record<string, string>> = {
  file: { path: 'Path', check: 'Ready when', after: 'After' },
  http: { url: 'URL (GET)', expectStatus: 'Status', jsonField: 'JSON field', equals: 'Equals (JSON)', timeoutS: 'Timeout (s)' },
  command: { argv: 'Program and arguments', cwd: 'Working directory', timeoutS: 'Timeout (s)' },
  signal: { name: 'Signal name', key: 'For key' },
  agent: { check: 'Precheck name', role: 'Asked role', timeoutS: 'Timeout (s)' },
};
const ANY_PRECONDITION: Record<string, string> = { kind: 'Kind', label: 'Label', ...Object.assign({}, ...Object.values(PRECONDITION_LABELS)), check: 'Check' };
const MAINTENANCE_LABELS: Record<string, string> = { start: 'From', end: 'To', days: 'Days' };

const PRE_RE = /^preconditions\.(\d+)(?:\.(\w+))?/;
const MW_RE = /^executionConditions\.maintenanceWindows\.(\d+)(?:\.(\w+))?/;

/**
 * The editor's label of a setting (`toleranceS` → "Tolerance (s)", `preconditions.1.url` → "URL").
 * `kindAt(i)` names precondition i's kind where the caller knows it.
 */
export function jobFieldLabel(field: string, kindAt?: (index: number) => string | undefined): string {
  const own = FIELD_LABELS[field];
  if (own) return own;
  const pre = PRE_RE.exec(field);
  if (pre) {
    const [, index, sub] = pre;
    if (sub === undefined) return `Check ${Number(index) + 1}`;
    const kind = kindAt?.(Number(index));
    return (kind ? PRECONDITION_LABELS[kind]?.[sub] : undefined) ?? ANY_PRECONDITION[sub] ?? sub;
  }
  const mw = MW_RE.exec(field);
  if (mw) {
    const [, index, sub] = mw;
    return sub === undefined ? `Maintenance window ${Number(index) + 1}` : (MAINTENANCE_LABELS[sub] ?? sub);
  }
  const parent = field.includes('.') ? field.slice(0, field.lastIndexOf('.')) : '';
  return parent ? jobFieldLabel(parent, kindAt) : 'Job';
}

/** The editor section a setting is in ("Retry", "Check 2", "Maintenance window 1"), for issue lists. */
export function jobSectionLabel(field: string): string {
  const pre = PRE_RE.exec(field);
  if (pre) return `Check ${Number(pre[1]) + 1}`;
  const mw = MW_RE.exec(field);
  if (mw) return `Maintenance window ${Number(mw[1]) + 1}`;
  const top = field.split('.')[0] ?? '';
  switch (top) {
    case 'schedule':
      return 'Schedule';
    case 'window':
      return 'Execution window';
    case 'calendar':
    case 'calendarPolicy':
      return 'Business calendar';
    case 'preconditions':
      return 'Preconditions';
    case 'executionConditions':
      return 'Execution conditions';
    case 'retry':
      return 'Retry';
    case 'missedWindow':
    case 'toleranceS':
      return 'Missed window';
    case 'overlap':
      return 'Overlap';
    case 'dstGapPolicy':
      return 'Daylight saving time';
    case 'backfillCapPerTick':
    case 'runTimeoutS':
      return 'Backfill and deadline';
    case 'payload':
      return 'Payload';
    case 'budget':
      return 'Spend';
    default:
      return 'Job';
  }
}
