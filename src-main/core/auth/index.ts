/**
 * Tokens (PROTOCOL §2, §17): per-agent and operator tokens, stored as hashes, compared in constant
 * time; and the operator's own settings ("Require a reason for actions"). The rest of the core and
 * the server import this interface, never tokens.ts or operator-settings.ts directly.
 */
export { TokenStore, hashToken, newSecret, secretsEqual, type TokenInfo } from './tokens';
export { OperatorSettingsStore } from './operator-settings';
