/**
 * Gaffer runs with umask 077, so every file it creates in its data directory is private to its
 * user (the files it knows of get 0600 explicitly too). The processes it starts for managed
 * agents are told the user's own umask in GAFFER_UMASK and put it back first thing, so the
 * commands they run create files as the user would (a checkout, a build) — not all private.
 */

/** Gaffer's shells: umask 077; returns the one the user had, for the managed agents. */
export function tightenUmask() {
  if (process.platform === 'win32') return undefined;
  return process.umask(0o077);
}

/** A managed agent's process: the user's umask from GAFFER_UMASK, which is then removed. */
export function restoreUserUmask(env = process.env) {
  const raw = env.GAFFER_UMASK;
  delete env.GAFFER_UMASK;
  if (raw === undefined || process.platform === 'win32' || !/^[0-7]{1,4}$/.test(raw)) return;
  process.umask(parseInt(raw, 8));
}
