/** A task priority as typed: a whole number within the server's bounds (higher is claimed first). */
export const MAX_PRIORITY = 1_000_000;

/** The error text for a typed priority, or null when it is one. */
export function validatePriority(s: string): string | null {
  const n = Number(s.trim());
  if (!s.trim() || !Number.isInteger(n)) return 'A whole number (higher is claimed first).';
  if (Math.abs(n) > MAX_PRIORITY) return 'Between -1 000 000 and 1 000 000.';
  return null;
}
