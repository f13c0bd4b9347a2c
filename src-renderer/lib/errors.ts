/** Errors as the UI shows them: always a stable code and a sentence. */
import { ConsoleCallError } from '../../src-main/common/console-api';

export interface UiError {
  /** Stable code from the server (`not_holder`, `invalid_transition`, …) or `network` / `client`. */
  code: string;
  message: string;
  status?: number;
  /** Field-level detail when the server gave it (validation). */
  detail?: unknown;
}

export function toUiError(e: unknown): UiError {
  if (e instanceof ConsoleCallError) {
    return { code: e.body.code, message: e.body.message, status: e.body.status, ...(e.body.detail === undefined ? {} : { detail: e.body.detail }) };
  }
  if (e && typeof e === 'object') {
    const o = e as { code?: unknown; message?: unknown; status?: unknown; body?: { code?: unknown; message?: unknown; status?: unknown } };
    if (o.body && typeof o.body.code === 'string') {
      return { code: o.body.code, message: String(o.body.message ?? o.body.code), ...(typeof o.body.status === 'number' ? { status: o.body.status } : {}) };
    }
    if (typeof o.code === 'string' && typeof o.message === 'string') {
      return { code: o.code, message: o.message, ...(typeof o.status === 'number' ? { status: o.status } : {}) };
    }
    if (e instanceof TypeError) return { code: 'network', message: `cannot reach Gaffer: ${e.message}` };
    if (e instanceof Error) return { code: 'client', message: e.message };
  }
  return { code: 'client', message: String(e) };
}

/**
 * Runs an operator action; if it fails, shows "Could not <what>" with the server's reason, then
 * rethrows (so the dialog that started it stays open).
 */
export async function guarded<T>(
  toast: (tone: 'error', title: string, body?: string, code?: string) => void,
  what: string,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const err = toUiError(e);
    toast('error', `Could not ${what}`, err.message, err.code);
    throw e;
  }
}

/** Codes that mean the connection (not the request) is the problem. */
export function isConnectionError(err: UiError): boolean {
  return err.code === 'network' || err.code === 'unavailable' || err.code === 'unauthorized';
}

/** What to tell the operator to do about an error, when there is something obvious. */
export function errorHint(err: UiError): string | null {
  switch (err.code) {
    case 'network':
      return 'Is Gaffer still running? The console retries every few seconds.';
    case 'unauthorized':
      return 'The operator token was refused: reopen the console with the URL Gaffer printed.';
    case 'not_holder':
      return 'Someone else holds this lock now: refresh and look again.';
    case 'invalid_transition':
      return 'The task changed state meanwhile; that action no longer applies.';
    case 'unavailable':
      return /reach/i.test(err.message)
        ? 'Is Gaffer still running? The console retries every few seconds.'
        : 'The database refused a write (disk full or read-only?).';
    case 'rate_limited':
      return 'Too many requests: wait a moment.';
    default:
      return null;
  }
}
