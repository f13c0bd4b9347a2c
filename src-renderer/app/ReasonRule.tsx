/**
 * Provides the operator's "Require a reason for actions" to every reason field (components/Dialog):
 * off (the default, a solo operator), a dialog's reason is optional and an action without one is
 * audited as "no reason given". Until the settings are loaded the field asks for a reason (the
 * strict rule), so a slow start never lets a team's operator skip one.
 */
import type { ReactNode } from 'react';
import { ReasonRequired } from '../components/Dialog';
import { useConsole, useWatch } from '../store/react';

export function ReasonRuleProvider({ children }: { children: ReactNode }) {
  useWatch('settings');
  const required = useConsole((s) => s.settings.data?.requireReason);
  return <ReasonRequired.Provider value={required ?? true}>{children}</ReasonRequired.Provider>;
}
