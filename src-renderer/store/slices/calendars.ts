/** The calendars slice: business calendars (list, validate, save) and `.ics` import. */
import type { IcsImportResult } from '../../../src-main/common/console-api';
import type { BusinessCalendar, CalendarInput, JobIssue } from '../../../src-main/common/job-schema';
import { guarded } from '../../lib/errors';
import { emptyResource, type Resource } from '../resource';
import { loaderTopic, resourceLoader, type Slice, type SliceContext } from '../slice';

export interface CalendarsState {
  calendars: { list: Resource<BusinessCalendar[]> };
}

export const initialCalendarsState = (): CalendarsState => ({ calendars: { list: emptyResource() } });

export interface CalendarsActions {
  validateCalendar(calendar: Record<string, unknown>): Promise<{ ok: boolean; issues: JobIssue[] }>;
  saveCalendar(input: { create: boolean; calendar: CalendarInput; reason?: string }): Promise<BusinessCalendar>;
  importIcs(id: string, ics: string, mode: 'merge' | 'replace', reason: string): Promise<IcsImportResult>;
}

export function createCalendarsSlice(ctx: SliceContext<CalendarsState>): Slice<CalendarsActions> {
  const { call } = ctx;
  const list = resourceLoader(ctx, { get: () => ctx.get().calendars.list, set: (l) => ctx.set({ calendars: { ...ctx.get().calendars, list: l } }) }, () => call('calendars.list', {}));

  /** A calendar moves its jobs' slots: the job list is stale too. */
  const changed = () => {
    void list.refresh();
    ctx.invalidate('jobs');
  };

  const actions: CalendarsActions = {
    validateCalendar: (calendar) => call('calendars.validate', { calendar }),

    async saveCalendar({ create, calendar, reason }) {
      let r: BusinessCalendar;
      if (create) r = await call('calendars.create', { calendar, ...(reason ? { reason } : {}) });
      else {
        const { id, ...body } = calendar;
        r = await call('calendars.update', { id, calendar: body, reason: reason ?? '' });
      }
      ctx.toast('success', `${create ? 'Created' : 'Saved'} calendar ${r.id} (version ${r.version})`);
      changed();
      return r;
    },

    importIcs(id, ics, mode, reason) {
      return guarded(ctx.toast, 'import the .ics file', async () => {
        const r = await call('calendars.importIcs', { id, ics, mode, reason });
        ctx.toast('success', `Imported into ${id}: +${r.added.holidays} holidays, +${r.added.extraWorkdays} make-up workdays`, r.warnings.length ? `${r.warnings.length} warning(s)` : undefined);
        changed();
        return r;
      });
    },
  };

  return { actions, topics: { calendars: loaderTopic(list) }, dispose: () => list.dispose() };
}
