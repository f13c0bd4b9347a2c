#!/bin/sh
# A coding agent on a repository, one worktree per task (docs/command-agent.md, "Workspaces"):
#
#   gaffer agent --role dev --workspace ~/src/app --base main --parse claude-stream-json \
#     --timeout-s 1800 -- sh examples/command-agent/coding-task.sh
#
# Gaffer runs this in $GAFFER_WORKSPACE, a git worktree on branch $GAFFER_BRANCH (gaffer/task-<id>)
# started from $GAFFER_BASE. On a retry ($GAFFER_ATTEMPT > 1) the tree holds what the last attempt
# left ($GAFFER_WORKSPACE_RESUMED=1); an attempt whose holder vanished has GAFFER_PREVIOUSLY_EXPIRED=1.
# Set CLI=codex to use Codex instead of Claude Code (then --parse codex-json).
set -eu
prompt="Work on this task in the current git repository: $GAFFER_TASK_TITLE.
The whole task as JSON is in $GAFFER_PAYLOAD_FILE.
Commit your work on the current branch ($GAFFER_BRANCH) with a clear message; do not push.
Make sure 'npm test' passes before you finish."
if [ "${GAFFER_WORKSPACE_RESUMED:-0}" = 1 ]; then
  prompt="$prompt
This is attempt $GAFFER_ATTEMPT: an earlier attempt already worked here (see git log $GAFFER_BASE..HEAD
and git status) and may have stopped half way. Continue from there; do not start over."
fi
# Submodules are not checked out in a new worktree: fetch them if the repository has any.
if [ -f .gitmodules ]; then git submodule update --init --recursive; fi
if [ "${CLI:-claude}" = codex ]; then
  codex exec --json --full-auto "$prompt"
else
  claude -p "$prompt" --output-format stream-json --verbose --permission-mode acceptEdits
fi
# Nothing committed: ask for another attempt rather than report done (75 = retry later).
if [ -z "$(git rev-list "$GAFFER_BASE..HEAD")" ]; then echo "no commit on $GAFFER_BRANCH" >&2; exit 75; fi
