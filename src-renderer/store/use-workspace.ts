/**
 * What a task's or run's attempts changed (PROTOCOL §15), for its detail pane: the artifacts, the
 * attempt shown (default the latest with a workspace) and that attempt's diff. Reloaded when
 * `version` changes (a new attempt, a status change).
 */
import { useEffect, useState } from 'react';
import type { ArtifactView } from '../../src-main/common/logs';
import { toUiError, type UiError } from '../lib/errors';
import type { WorkspaceData } from '../lib/workspace-data';
import { useActions } from './react';

export function useWorkspace(subject: string, version: string): WorkspaceData {
  const { artifacts, workspaceDiff } = useActions();
  const [items, setItems] = useState<ArtifactView[] | null>(null);
  const [attempt, setAttempt] = useState<number | null>(null);
  const [diff, setDiff] = useState<{ attempt: number; diff: string } | null>(null);
  const [error, setError] = useState<UiError | null>(null);
  useEffect(() => {
    let live = true;
    artifacts(subject).then(
      (a) => live && (setItems(a), setError(null)),
      (e: unknown) => live && setError(toUiError(e)),
    );
    return () => {
      live = false;
    };
  }, [subject, version, artifacts]);
  const workspaces = (items ?? []).filter((a) => a.kind === 'workspace');
  const shown = attempt ?? workspaces[workspaces.length - 1]?.attempt ?? null;
  useEffect(() => {
    if (shown === null) return;
    let live = true;
    workspaceDiff(subject, shown).then(
      (d) => live && setDiff(d),
      (e: unknown) => live && setError(toUiError(e)),
    );
    return () => {
      live = false;
    };
  }, [subject, shown, version, workspaceDiff]);
  return { items, shown, diff, error, showAttempt: setAttempt };
}
