/**
 * `--parse gemini-stream-json`: Google's Gemini CLI, `gemini -p … --output-format stream-json`.
 *
 * The documented stream is one JSON event per line: `init {session_id, model}`, `message {role,
 * content, delta?}` (assistant text may arrive in chunks), `tool_use {tool_name, tool_id,
 * parameters}`, `tool_result {tool_id, status, output | error}`, `error {message}` and, last,
 * `result {status, stats: {input_tokens, output_tokens, total_tokens, …}, error?}`.
 *
 * Assistant chunks are joined and logged line by line once the message is complete (at the next
 * other event). Usage: the documented stream carries token counts only in the result's stats (no
 * per-message usage), so they are sent once, as the attempt's totals (`final: true`, with the
 * model named by `init`; Gaffer prices them). Cached input (`cached`) is sent as `cacheReadTokens`.
 *
 * PROTOCOL §16: lines carry `kind` and `data` (tool calls with their parameters, every tool result
 * with its output or error); the init's `session_id` is the session `gemini --resume` continues.
 */
import { brief, capData, capText, dataOf, jsonObject, logText, num, obj, str, type AdapterDefinition, type AdapterSink, type OutputAdapter } from './types';

class GeminiStreamJson implements OutputAdapter {
  private errorText: string | undefined;
  private model: string | undefined;
  private sessionId: string | undefined;
  private pending = '';
  private answer = '';
  private status: string | undefined;
  /** tool_id → tool name, so a result names its tool. */
  private readonly tools = new Map<string, string>();

  line(text: string, sink: AdapterSink): boolean {
    const ev = jsonObject(text);
    const type = str(ev?.type);
    if (!ev || !type) return false;
    if (type === 'message') {
      if (ev.role === 'assistant' && typeof ev.content === 'string') {
        if (ev.delta !== true) this.flush(sink);
        this.pending += ev.content;
        if (ev.delta !== true) this.flush(sink);
      }
      return true;
    }
    this.flush(sink);
    switch (type) {
      case 'init':
        this.model = str(ev.model);
        this.sessionId = str(ev.session_id);
        if (this.sessionId) sink.session('gemini', this.sessionId);
        sink.log(`gemini session ${this.sessionId ?? '?'} started${this.model ? ` (model ${this.model})` : ''}`, undefined, {
          kind: 'system',
          data: dataOf({ cli: 'gemini', sessionId: this.sessionId, model: this.model }),
        });
        return true;
      case 'tool_use': {
        const id = str(ev.tool_id);
        const name = str(ev.tool_name) ?? '?';
        if (id) this.tools.set(id, name);
        sink.log(`tool ${name}: ${brief(ev.parameters ?? '')}`, undefined, { kind: 'tool_call', data: dataOf({ id, name, input: capData(ev.parameters) }) });
        return true;
      }
      case 'tool_result': {
        const id = str(ev.tool_id);
        const name = id ? this.tools.get(id) : undefined;
        const isError = ev.status !== 'success';
        const output = isError ? (str(obj(ev.error)?.message) ?? ev.error ?? ev.output ?? '') : (ev.output ?? '');
        const data = dataOf({ id, name, output: capData(output), isError });
        if (isError) sink.log(`tool ${id ?? '?'} failed: ${brief(output)}`, 'warn', { kind: 'tool_result', data });
        else sink.log(`tool ${name ?? id ?? 'result'} done: ${brief(output)}`, undefined, { kind: 'tool_result', data });
        return true;
      }
      case 'error':
        sink.log(`gemini: ${brief(str(ev.message) ?? 'error', 500)}`, 'warn', { kind: 'error', data: dataOf({ message: str(ev.message) }) });
        return true;
      case 'result': {
        this.status = str(ev.status);
        const stats = obj(ev.stats);
        const input = num(stats?.input_tokens);
        const output = num(stats?.output_tokens);
        const cost = num(stats?.total_cost_usd);
        const cached = num(stats?.cached);
        if (input !== undefined || output !== undefined || cost !== undefined) {
          sink.usage({
            inputTokens: input ?? 0,
            outputTokens: output ?? 0,
            ...(cached ? { cacheReadTokens: Math.min(cached, input ?? 0) } : {}),
            ...(cost !== undefined ? { costUsd: cost } : { estimated: true }),
            final: true,
            ...(this.model ? { model: this.model } : {}),
          });
        }
        const failed = this.status !== undefined && this.status !== 'success';
        const why = str(obj(ev.error)?.message);
        if (failed) this.errorText = why ?? `gemini ended with status ${this.status}`;
        sink.log(`gemini finished: ${this.status ?? 'done'}${why ? ` — ${brief(why, 500)}` : ''}`, failed ? 'error' : 'info', {
          kind: 'result',
          data: dataOf({
            isError: failed,
            status: this.status,
            costUsd: cost,
            durationMs: num(stats?.duration_ms),
            usage: input !== undefined || output !== undefined ? { inputTokens: input ?? 0, outputTokens: output ?? 0 } : undefined,
            model: this.model,
            errors: why ? [why] : undefined,
          }),
        });
        return true;
      }
      default:
        return false;
    }
  }

  end(sink: AdapterSink): void {
    this.flush(sink);
  }

  error(): string | undefined {
    return this.errorText;
  }

  private flush(sink: AdapterSink): void {
    if (!this.pending) return;
    logText(sink, this.pending, undefined, { kind: 'assistant', data: dataOf({ model: this.model }) });
    this.answer += (this.answer ? '\n' : '') + this.pending;
    this.pending = '';
  }

  result(): Record<string, unknown> | undefined {
    const answer = this.answer + (this.pending ? (this.answer ? '\n' : '') + this.pending : '');
    if (!answer && !this.status) return undefined;
    return { ...(answer ? { result: capText(answer) } : {}), ...(this.status ? { status: this.status } : {}), ...(this.sessionId ? { sessionId: this.sessionId } : {}) };
  }
}

export const geminiStreamJson: AdapterDefinition = {
  summary: 'Gemini CLI: gemini -p … --output-format stream-json (token counts from the result stats)',
  create: () => new GeminiStreamJson(),
};
