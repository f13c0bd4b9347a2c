/**
 * Time zone names as they are stored: `europe/berlin` is the zone Europe/Berlin, so it is kept as
 * `Europe/Berlin` (one spelling per zone in the database, the console and the audit).
 *
 * Invariant: a name that is not a zone comes back unchanged (undefined from `canonicalZone`), so
 * the validators that explain a bad zone in plain words still see what was typed.
 */

let listedByLowerCase: Map<string, string> | undefined;

function listed(): Map<string, string> {
  const names = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return (listedByLowerCase ??= new Map(names.map((z) => [z.toLowerCase(), z])));
}

/**
 * The canonical spelling of a zone name, or undefined when it is none. Letter case is IANA's
 * (`europe/berlin` → `Europe/Berlin`, `utc` → `UTC`). A link that the platform's database resolves
 * to another name (`Asia/Kolkata` → ICU's `Asia/Calcutta`) is kept as typed when it is spelled the
 * way IANA spells names (each part starting with a capital), else stored as the zone it resolves to.
 */
export function canonicalZone(name: string): string | undefined {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
  if (resolved === name) return name;
  const lower = name.toLowerCase();
  const known = listed().get(lower);
  if (known !== undefined) return known;
  if (resolved.toLowerCase() === lower) return resolved;
  return name.split('/').every((part) => /^[A-Z]/.test(part)) ? name : resolved;
}

/** `canonicalZone`, or the name unchanged when it is not a zone (for schemas that explain a bad one later). */
export function canonicalZoneOrAsTyped(name: string): string {
  return canonicalZone(name) ?? name;
}
