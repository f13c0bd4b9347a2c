/**
 * A job agent: Gaffer pushes `job_trigger`s for the daily report job; this writes
 * `reports/daily-<slot>.md` and sends a notification.
 *
 *   GAFFER_URL=ws://127.0.0.1:7311/agent GAFFER_TOKEN=gft_… npx tsx examples/report-agent.ts
 *
 * Optional: GAFFER_ROLE (default `reporter`), GAFFER_NAME, REPORTS_DIR (default `reports`),
 * DATA_DIR (default `data`, for the `data-ready` precheck).
 *
 * Idempotency, as SPEC §4 asks:
 * - The file name carries the slot (the business key), so a rerun of the same slot overwrites
 *   the same file instead of adding a second one.
 * - "write file" and "notify" are checkpointed steps: a retry skips what an earlier attempt
 *   finished, so the notification is never sent twice by a retry.
 * - The notification carries `ctx.idempotencyKey` (the same for every attempt of the slot), so
 *   the receiving system can drop a duplicate even in the worst case.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FatalError, RetryableError, type JobContext, type PrecheckHandler } from 'gaffer-agent';
import { connectFromEnv } from './connect-from-env';

/** A slot like `2026-11-30T09:00` becomes a safe file-name part (`2026-11-30T09-00`). */
export function slotFileName(slot: string): string {
  if (!/^[0-9A-Za-z:_.-]{1,64}$/.test(slot)) throw new FatalError(`unexpected slot "${slot}"`);
  return `daily-${slot.replace(/:/g, '-')}.md`;
}

export type Notify = (text: string, idempotencyKey: string) => Promise<string>;

/** Stand-in for a chat/e-mail API: prints, and returns a message id. */
export const printNotify: Notify = async (text, key) => {
  console.log(`[notify] ${text} (idempotency key ${key})`);
  return `msg-${key}`;
};

export function reportJob(opts: { dir: string; notify: Notify }) {
  return async (ctx: JobContext): Promise<{ file: string }> => {
    const file = path.join(opts.dir, slotFileName(ctx.slot));
    await ctx.step(
      'write file',
      async () => {
        const body = [
          `# Daily report — ${ctx.slot}`,
          '',
          `- job: ${ctx.job} (version ${ctx.version})`,
          `- run: ${ctx.runId}, attempt ${ctx.attempt}`,
          `- payload: \`${JSON.stringify(ctx.payload)}\``,
          '',
        ].join('\n');
        try {
          await fs.mkdir(opts.dir, { recursive: true });
          // Write then rename: a crash never leaves a half-written report under the final name.
          await fs.writeFile(`${file}.tmp`, body);
          await fs.rename(`${file}.tmp`, file);
        } catch (e) {
          throw new RetryableError(`cannot write ${file}: ${(e as Error).message}`, { cause: e });
        }
        return file;
      },
      { ref: file },
    );
    await ctx.step('notify', () => opts.notify(`Daily report for ${ctx.slot} is ready: ${file}`, ctx.idempotencyKey), {
      ref: (messageId) => messageId,
    });
    return { file };
  };
}

/** Precheck `data-ready`: is the input for the slot there? Answers with the evidence it looked at. */
export function dataReady(dataDir: string): PrecheckHandler {
  return async ({ slot }) => {
    const input = path.join(dataDir, `${slot.slice(0, 10)}.csv`);
    const stat = await fs.stat(input).catch(() => undefined);
    return stat
      ? { ready: true, reason: `found ${input}`, evidence: { path: input, bytes: stat.size, modified: stat.mtime.toISOString() } }
      : { ready: false, reason: `${input} does not exist yet`, evidence: { path: input } };
  };
}

async function main(): Promise<void> {
  const agent = await connectFromEnv('reporter', 'reporter');
  agent.onJob(reportJob({ dir: process.env.REPORTS_DIR ?? 'reports', notify: printNotify }));
  agent.onPrecheck('data-ready', dataReady(process.env.DATA_DIR ?? 'data'));
  agent.on('job.started', ({ runId, slot }) => console.log(`run ${runId} for slot ${slot} started`));
  agent.on('job.step', ({ step, skipped }) => console.log(`  step "${step}" ${skipped ? 'skipped (done by an earlier attempt)' : 'done'}`));
  agent.on('job.finished', ({ runId, outcome, errorClass }) => console.log(`run ${runId}: ${outcome}${errorClass ? ` (${errorClass})` : ''}`));
  console.log(`connected as ${agent.instanceId}; waiting for job triggers (Ctrl-C to stop)`);
  await new Promise<void>((resolve) => process.once('SIGINT', resolve));
  console.log('shutting down…');
  await agent.close({ timeoutMs: 10_000 });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
