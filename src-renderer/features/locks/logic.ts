/** Pure logic of the expired-lock cards. */

/** Plain words for the watchdog's reasons. */
export function expiryReason(reason: string): { label: string; tone: string } {
  switch (reason) {
    case 'lock_window':
    case 'window':
    case 'expired':
      return { label: 'lock window ran out', tone: 'blocked' };
    case 'heartbeat_timeout':
    case 'heartbeat':
    case 'offline':
      return { label: 'holder stopped heartbeating', tone: 'failed' };
    case 'disconnected':
    case 'reconnect_grace':
      return { label: 'holder disconnected, did not come back', tone: 'failed' };
    case 'force_release':
      return { label: 'force-released by the operator', tone: 'progress' };
    default:
      return { label: reason.replace(/_/g, ' '), tone: 'blocked' };
  }
}


/** Whether a card is an operator's force-release (not the watchdog's doing). */
export function isForceRelease(reason: string): boolean {
  return reason === 'force_release';
}
