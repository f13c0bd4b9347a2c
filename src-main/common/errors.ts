/**
 * Stable error codes shared by the core, the agent socket, the HTTP API and IPC.
 * Codes and statuses for the v1 codes are fixed by PROTOCOL.md; later codes are additions.
 * Classes do not survive serialisation, so everything that crosses a boundary is an `ErrorBody`.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  not_holder: 409,
  conflict: 409,
  too_large: 413,
  invalid_transition: 422,
  rate_limited: 429,
  /** PROTOCOL §17: one agent token already holds its most sockets at once (64). */
  too_many_connections: 429,
  internal: 500,
  /** The database refused a write it could not make durable (disk full, read-only file). */
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  code: ErrorCode;
  status: number;
  message: string;
  /** Optional machine-readable detail (e.g. the field that failed validation). */
  detail?: unknown;
}

export class GafferError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail?: unknown;

  constructor(code: ErrorCode, message: string, detail?: unknown) {
    super(message);
    this.name = 'GafferError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.detail = detail;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { code: this.code, status: this.status, message: this.message };
    if (this.detail !== undefined) body.detail = this.detail;
    return body;
  }
}

export type Result<T> = { ok: true; value: T } | { ok: false; error: ErrorBody };

export function isGafferError(e: unknown): e is GafferError {
  return e instanceof GafferError;
}

/** Turns anything thrown into a serialisable error body; unknown errors become `internal`. */
export function toErrorBody(e: unknown): ErrorBody {
  if (e instanceof GafferError) return e.toBody();
  const message = e instanceof Error ? e.message : String(e);
  return { code: 'internal', status: 500, message };
}

/** For exhaustive switches: the compiler proves this is unreachable. */
export function missingCase(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
