import { afterEach, describe, expect, it } from 'vitest';
import { ConsoleKit } from '../../testing/console-kit';
import { createConsoleStore, type ConsoleStore } from '../console-store';

let made: Array<ConsoleStore | ConsoleKit> = [];
afterEach(() => {
  made.forEach((m) => m.dispose());
  made = [];
});

describe('logs slice', () => {
  it('follows the tails of the logs on screen only, newest seq first, and forgets them when closed', () => {
    const api = new ConsoleKit();
    const timers = api.timers;
    const cs = createConsoleStore(api, { timers, now: timers.now, liveIntervalMs: 250, refreshIntervalMs: 1000, safetyRefreshMs: 60_000 });
    made.push(cs, api);
    const stop = cs.actions.start();
    const unwatch = cs.actions.watch('logs');
    const unfollow = cs.actions.followLog('task:1');
    api.emit({ type: 'log.appended', subject: 'task:1', attempt: 1, lastSeq: 40 });
    api.emit({ type: 'log.appended', subject: 'task:1', attempt: 1, lastSeq: 90 });
    api.emit({ type: 'log.appended', subject: 'task:2', attempt: 1, lastSeq: 5 }); // not on screen
    timers.advance(250);
    expect(cs.store.getState().logTails).toEqual({ 'task:1': { attempt: 1, lastSeq: 90 } });
    unfollow();
    expect(cs.store.getState().logTails).toEqual({});
    api.emit({ type: 'log.appended', subject: 'task:1', attempt: 1, lastSeq: 99 });
    timers.advance(250);
    expect(cs.store.getState().logTails).toEqual({});
    unwatch();
    stop();
  });
});
