#!/usr/bin/env node
/**
 * A stand-in for `claude -p … --output-format stream-json --verbose` in tests, written from Claude
 * Code's documented stream: `system/init`, then assistant messages (each with its `usage`), then
 * the `result` message with the session's totals and the CLI's own `total_cost_usd`.
 *
 *   node fake-claude.mjs MESSAGES INPUT_TOKENS_PER_MESSAGE DELAY_MS [PID_FILE]
 *
 * Writes its pid to PID_FILE (when given), then one assistant message every DELAY_MS, then the
 * result. A spend cap should stop it before the result arrives.
 */
import fs from 'node:fs';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';

const [messages = '3', perMessage = '1000', delay = '0', pidFile] = process.argv.slice(2);
if (pidFile) fs.writeFileSync(pidFile, String(process.pid));
const session = '7c0f6a52-1d2e-4b3a-9c8d-0e1f2a3b4c5d';
const model = 'claude-sonnet-4-5-20250929';
const line = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
line({ type: 'system', subtype: 'init', session_id: session, model, cwd: process.cwd(), tools: ['Bash'], permissionMode: 'acceptEdits' });
let input = 0;
let output = 0;
for (let i = 1; i <= Number(messages); i++) {
  const usage = { input_tokens: Number(perMessage), output_tokens: 50 };
  input += usage.input_tokens;
  output += usage.output_tokens;
  line({ type: 'assistant', message: { id: `msg_${i}`, type: 'message', role: 'assistant', model, content: [{ type: 'text', text: `step ${i} done` }], usage }, parent_tool_use_id: null, session_id: session });
  await sleep(Number(delay));
}
line({ type: 'result', subtype: 'success', is_error: false, num_turns: Number(messages), result: 'all steps done', session_id: session, total_cost_usd: 0.01, usage: { input_tokens: input, output_tokens: output } });
