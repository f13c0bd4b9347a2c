/** What the workspace section of a detail pane shows (filled by store/use-workspace.ts). */
import type { ArtifactView } from '../../src-main/common/logs';
import type { UiError } from './errors';

export interface WorkspaceData {
  items: ArtifactView[] | null;
  /** The attempt whose workspace is shown, or null when none has one. */
  shown: number | null;
  diff: { attempt: number; diff: string } | null;
  error: UiError | null;
  showAttempt: (attempt: number) => void;
}
