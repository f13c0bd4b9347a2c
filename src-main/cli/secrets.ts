/**
 * The tokens of a `gaffer` subcommand. scripts/gaffer.mjs took them out of the process's
 * environment before anything else ran (PROTOCOL §17, scripts/lib/process-secrets.mjs); the
 * subcommands read their options from the environment as before, with the tokens put back in a
 * plain object that no child process ever receives.
 */
import { secretWarnings, takeProcessSecrets, type TokenVariable } from '../../scripts/lib/process-secrets.mjs';

/** `process.env` plus the tokens this process was handed. */
export function environmentWithTokens(): NodeJS.ProcessEnv {
  return { ...process.env, ...takeProcessSecrets().tokens };
}

/** One token, for handing it on to a child (`secretPipes`). */
export function processToken(name: TokenVariable): string | undefined {
  return takeProcessSecrets().tokens[name];
}

/** Lines worth a warning on stderr (a failed hand-off, an ancestor still holding a token). */
export function tokenWarnings(): string[] {
  return secretWarnings(takeProcessSecrets());
}
