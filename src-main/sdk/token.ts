/**
 * The agent token a process was handed (PROTOCOL §17). Gaffer hands it over in a file or on a
 * pipe: `GAFFER_TOKEN_FILE` names a 0600 file, deleted once read (a `long_running` managed agent
 * gets this); `GAFFER_TOKEN_FD` names an inherited file descriptor, read to its end once and
 * closed. An agent started by hand may still have it in `GAFFER_TOKEN`. Either way it is taken out of the process's
 * environment — on Linux also out of /proc/<pid>/environ — so nothing this process starts inherits
 * it. Later calls return the same value.
 */
import { takeProcessSecrets } from '../../scripts/lib/process-secrets.mjs';

export function agentTokenFromEnvironment(): string | undefined {
  return takeProcessSecrets().tokens.GAFFER_TOKEN;
}
