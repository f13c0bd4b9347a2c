import { describeVerify, verificationError } from '../../../src-main/common/verify';
import { VerificationChecks } from '../../components/done-when/VerificationChecks';
import { useEffect, useState } from 'react';
import type { Task } from '../../../src-main/common/model';
import { navigate } from '../../lib/navigation';
import { Badge, TaskStatusBadge } from '../../components/Badge';
import { ErrorBanner, Spinner } from '../../components/States';
import { Countdown, RelativeTime } from '../../components/Time';
import { formatDateTime, prettyJson } from '../../lib/format';
import { toUiError, type UiError } from '../../lib/errors';
import { ActivitySection } from '../../components/logs/ActivitySection';
import { AttemptSpendRow } from '../../components/AttemptSpendRow';
import { WorkspaceSection } from '../../components/diff/WorkspaceSection';
import { useWorkspace } from '../../store/use-workspace';
import { useNow } from '../../lib/now';
import { useActions } from '../../store/react';
import { useActivity } from '../../store/use-log-source';
import { withKey } from '../../lib/list-keys';
import { useAttemptSpend } from '../../store/use-attempt-spend';
import { ACTION_META, actionsFor, TASK_ACTION_KEYS, type TaskPaneAction } from './logic';

/** The task pane: everything about one task, its blockers, and the operator's actions. */
export function TaskDetail({
  taskId,
  task: loaded,
  names,
  known,
  lockWindowS,
  onAction,
  onClose,
}: {
  taskId: number;
  task: Task | null;
  names: Map<string, string>;
  known: Map<number, Task>;
  lockWindowS: number | undefined;
  onAction: (t: Task, kind: TaskPaneAction) => void;
  onClose: () => void;
}) {
  const { getTask } = useActions();
  const [fetched, setFetched] = useState<Task | null>(null);
  const [error, setError] = useState<UiError | null>(null);
  const [deps, setDeps] = useState<Map<number, Task | UiError>>(new Map());
  // Prefer the live copy from the board. The board's rows do not carry the latest verification
  // (the checks' outcome), so the task is also fetched as the operator reads it — again whenever the
  // board's copy changes — and its verification shown beside the live copy.
  const task = loaded ? withVerificationOf(loaded, fetched) : fetched;
  const changed = loaded ? `${loaded.status}:${loaded.attempt}:${loaded.updatedAt}` : '';
  useEffect(() => {
    let live = true;
    getTask(taskId).then(
      (t) => live && setFetched(t),
      (e) => live && setError(toUiError(e)),
    );
    return () => {
      live = false;
    };
  }, [taskId, changed, getTask]);
  const depKey = task?.dependsOn.join(',') ?? '';
  useEffect(() => {
    if (!depKey) return;
    let live = true;
    const ids = depKey.split(',').map(Number).slice(0, 25);
    void Promise.all(
      ids.map((id): Promise<[number, Task | UiError]> =>
        getTask(id).then(
          (t): [number, Task | UiError] => [id, t],
          (e): [number, Task | UiError] => [id, toUiError(e)],
        ),
      ),
    ).then((rows) => {
      if (live) setDeps(new Map(rows));
    });
    return () => {
      live = false;
    };
  }, [depKey, getTask]);

  return (
    <aside className="pane" aria-label={`Task ${taskId}`} data-testid="task-detail">
      <div className="pane-head">
        <h2>Task #{taskId}</h2>
        <button className="icon-btn" aria-label="Close (Esc)" title="Close (Esc)" onClick={onClose} data-pane-close>
          ×
        </button>
      </div>
      {!task ? (
        error ? (
          <ErrorBanner error={error} what={`Could not load task #${taskId}`} />
        ) : (
          <Spinner label="Loading…" />
        )
      ) : (
        <div className="pane-body">
          <div className="pane-title">{task.title}</div>
          <div className="chips">
            <TaskStatusBadge task={task} />
            <Badge>role {task.role}</Badge>
            <Badge>priority {task.priority}</Badge>
            {task.attempt > 0 ? <Badge>attempt {task.attempt}</Badge> : null}
            {task.previouslyExpired ? (
              <Badge tone="blocked" title="an earlier holder's lock expired">
                previously expired
              </Badge>
            ) : null}
          </div>
          {task.previouslyExpired ? (
            <p className="small muted">A previous holder’s lock expired: the next holder is told so and checks for half-done work before continuing.</p>
          ) : null}
          <TaskDoneWhen task={task} />

          <div className="actions-row">
            {actionsFor(task).map((k) => (
              <button
                key={k}
                className={`btn btn-small${ACTION_META[k].danger ? ' btn-danger-quiet' : ''}`}
                onClick={() => onAction(task, k)}
                title={TASK_ACTION_KEYS[k] ? withKey(ACTION_META[k].explain, TASK_ACTION_KEYS[k]) : ACTION_META[k].explain}
                aria-keyshortcuts={TASK_ACTION_KEYS[k]}
                data-testid={`action-${k}`}
              >
                {ACTION_META[k].label}
              </button>
            ))}
            <button className="btn btn-small btn-ghost" onClick={() => navigate('audit', null, { subject: `task:${task.id}` })}>
              Audit trail
            </button>
          </div>

          <dl className="kv">
            <dt>Lock</dt>
            <dd>
              {task.lock ? (
                <>
                  held by <strong>{names.get(task.lock.instanceId) ?? task.lock.instanceId}</strong>
                  <div className="small muted mono">{task.lock.instanceId}</div>
                  <div>
                    time left <Countdown expiresAt={task.lock.expiresAt} windowS={lockWindowS} /> · fence {task.lock.fence} · claimed <RelativeTime at={task.lock.claimedAt} />
                  </div>
                  <div className="small muted">
                    Released only by the holder’s status report, or when the lock window runs out.
                  </div>
                </>
              ) : (
                <span className="muted">none{task.status === 'backlog' && task.unmetDependencies === 0 ? ' — claimable' : ''}</span>
              )}
            </dd>
            <TaskSpend task={task} />
            <dt>Depends on</dt>
            <dd>
              {task.dependsOn.length === 0 ? (
                <span className="muted">nothing</span>
              ) : (
                <>
                  <div className="small muted">
                    {task.unmetDependencies} of {task.dependsOn.length} not done — the task is invisible to claimers until all are
                  </div>
                  <ul className="dep-list">
                    {task.dependsOn.map((id) => {
                      const got = deps.get(id) ?? known.get(id);
                      const d = got && isTask(got) ? got : null;
                      const err = got && !isTask(got) ? got : null;
                      return (
                        <li key={id}>
                          <button className="link" onClick={() => navigate('queues', d ? d.role : task.role, { task: String(id) })}>
                            #{id}
                          </button>{' '}
                          {d ? (
                            <>
                              <TaskStatusBadge task={d} /> <span className="small">{d.title}</span>
                            </>
                          ) : err ? (
                            <span className="error-code" title={err.message}>
                              {err.code}
                            </span>
                          ) : (
                            <span className="muted small">…</span>
                          )}
                        </li>
                      );
                    })}
                  </ul>
                </>
              )}
            </dd>
            {task.note && task.status === 'blocked' && saysChecksFailed(task, task.note) ? (
              <>
                <dt>Held because</dt>
                <dd>
                  Its agent said done, but the checks above failed.
                  <div className="small muted">Unblock it to try again; the next attempt is told which checks failed, and gets your note.</div>
                </dd>
              </>
            ) : task.note ? (
              <>
                {/* A blocked task's note is the agent's question; the note it is unblocked with is the answer. */}
                <dt>{task.status === 'blocked' ? 'The agent asks' : 'Note'}</dt>
                <dd className="prewrap" data-testid={task.status === 'blocked' ? 'agent-question' : undefined}>
                  {task.note}
                  {task.status === 'blocked' ? <div className="small muted">Unblock it with your answer as the note: the next attempt gets it (and continues the same conversation when its recipe resumes).</div> : null}
                </dd>
              </>
            ) : null}
            {task.answer ? (
              <>
                <dt>Your answer</dt>
                <dd className="prewrap">{task.answer}</dd>
              </>
            ) : null}
            <dt>Created</dt>
            <dd>
              {formatDateTime(task.createdAt)} · <RelativeTime at={task.createdAt} />
            </dd>
            <dt>Updated</dt>
            <dd>
              {formatDateTime(task.updatedAt)} · <RelativeTime at={task.updatedAt} />
            </dd>
            <dt>Payload</dt>
            <dd>
              <pre className="json">{prettyJson(task.payload, 20_000)}</pre>
            </dd>
            {task.output !== null && task.output !== undefined ? (
              <>
                <dt>Output</dt>
                <dd>
                  <pre className="json">{prettyJson(task.output, 20_000)}</pre>
                </dd>
              </>
            ) : null}
          </dl>
          <TaskActivity taskId={task.id} version={`${task.status}:${task.attempt}:${task.updatedAt}`} />
        </div>
      )}
    </aside>
  );
}

/** The board's live copy of a task with the verification of the fetched copy of the same attempt. */
function withVerificationOf(live: Task, fetched: Task | null): Task {
  if (!fetched?.verification || fetched.id !== live.id || fetched.attempt !== live.attempt || live.verification) return live;
  return { ...live, verification: fetched.verification };
}

/** "Done when…": the declaration in words, why the last attempt did not count, and the checks' latest outcome. */
function TaskDoneWhen({ task }: { task: Task }) {
  if (!task.verify && !task.verification && !task.previousError) return null;
  return (
    <section className="task-done-when" aria-label="Done when">
      {task.verify ? <p className="small">{sentence(describeVerify(task.verify))}</p> : null}
      {task.status === 'verifying' ? <p className="small">Its agent said done; Gaffer is running its checks now.</p> : null}
      {task.disposition === 'already_done' ? <p className="small">Already done: the checks passed before another attempt was handed out, so nobody did the work twice.</p> : null}
      {task.previousError && task.status !== 'done' && saysChecksFailed(task, task.previousError) ? (
        <p className="small">The next attempt is told which checks failed.</p>
      ) : task.previousError && task.status !== 'done' ? (
        <p className="small">
          The next attempt is told why the last one did not count: <span className="mono">{task.previousError}</span>
        </p>
      ) : null}
      {task.verification ? <VerificationChecks verification={task.verification} /> : null}
    </section>
  );
}

/** Whether `text` only restates the failed checks the pane already lists (the held note, the next attempt's error). */
function saysChecksFailed(task: Task, text: string): boolean {
  return !!task.verification && !task.verification.passed && text === verificationError(task.verification);
}

const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The latest attempt's spend against the task's cap, ticking while it is held. */
function TaskSpend({ task }: { task: Task }) {
  return <AttemptSpendRow spend={useAttemptSpend(`task:${task.id}`, `${task.status}:${task.attempt}:${task.updatedAt}`, task.status === 'in_progress')} />;
}

/** The task's log and timeline. */
function TaskActivity({ taskId, version }: { taskId: number; version: string }) {
  return (
    <>
      <ActivitySection {...useActivity(`task:${taskId}`, version)} now={useNow(30_000)} />
      <WorkspaceSection {...useWorkspace(`task:${taskId}`, version)} />
    </>
  );
}

function isTask(x: Task | UiError): x is Task {
  return typeof (x as Task).id === 'number' && typeof (x as Task).title === 'string';
}
