/**
 * Tool results for `gaffer mcp`: JSON text for the model, and errors as `isError` results with the
 * stable code first (`not_holder: …`, `lock_lost: …`) so a model can act on them — never a thrown
 * exception, which MCP hosts show as a crash of the tool rather than an answer.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { GafferSdkError } from '../../sdk';
import { SessionError } from './agent-session';

export function jsonResult(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] };
}

export function errorResult(code: string, message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message}` }] };
}

/** An HTTP API refusal (`{error: {code, status, message}}`), for the operator tools. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Runs a tool body; whatever it throws becomes an error result naming its code. */
export async function toolCall(body: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return jsonResult(await body());
  } catch (e) {
    if (e instanceof SessionError || e instanceof GafferSdkError || e instanceof ApiError) return errorResult(e.code, e.message);
    return errorResult('internal', e instanceof Error ? e.message : String(e));
  }
}
