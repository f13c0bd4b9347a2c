#!/usr/bin/env python3
"""An independent oracle for the schedule library's DST rules, written with Python's zoneinfo.

It knows nothing of the TypeScript code; it states the rules on its own terms:

* Interval slots (``everyS``) exist at every multiple of ``everyS`` seconds since the Unix epoch,
  whatever the zone does. The key is the local wall-clock minute (``YYYY-MM-DDTHH:MM``, plus
  ``:SS`` under 60 s); a wall-clock time that occurs for the second time (``fold == 1``, the
  repeated hour after a fall-back change) carries its UTC offset (``…T01:15+00:00``).
* A daily execution window whose start does not exist (a spring-forward gap) opens at the end of
  the gap, with its slot, and keeps its length.
* A window inside a repeated hour opens at the first pass of its start and closes at the second
  pass of its end.

Usage:
  dst-oracle.py fixture                       the committed fixture (transitions of 2026-2027, ±3 h)
  dst-oracle.py interval EVERY_S FROM TO ZONE…   every slot in [FROM, TO) (epoch seconds), one JSON line
The fixture is written to stdout: ``/usr/bin/python3 dst-oracle.py fixture > dst-oracle.fixture.json``.
"""
import json
import sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

ZONES = [
    'Europe/London', 'Europe/Berlin', 'Europe/Dublin', 'America/New_York', 'America/Los_Angeles',
    'America/St_Johns', 'America/Havana', 'America/Santiago', 'Australia/Sydney', 'Australia/Lord_Howe',
    'Pacific/Auckland',
]
YEARS = (2026, 2027)


def offset_text(td):
    total = int(td.total_seconds())
    sign = '+' if total >= 0 else '-'
    total = abs(total)
    text = f'{sign}{total // 3600:02d}:{total % 3600 // 60:02d}'
    return text + (f':{total % 60:02d}' if total % 60 else '')


def interval_key(ts, every_s, tz):
    local = datetime.fromtimestamp(ts, tz)
    key = local.strftime('%Y-%m-%dT%H:%M' + (':%S' if every_s < 60 else ''))
    if local.fold == 1:
        key += offset_text(local.utcoffset())
    return key


def interval_slots(every_s, start, end, tz):
    """Keys of the slots in [start, end), in order; slot i is due at first + i * every_s."""
    first = -(-start // every_s) * every_s
    return {'first': first * 1000, 'keys': [interval_key(ts, every_s, tz) for ts in range(first, end, every_s)]}


def transitions(tz):
    """(instant in epoch seconds, offset before, offset after) of every change in YEARS."""
    out = []
    t = int(datetime(YEARS[0], 1, 1, tzinfo=timezone.utc).timestamp())
    end = int(datetime(YEARS[-1] + 1, 1, 1, tzinfo=timezone.utc).timestamp())
    prev = datetime.fromtimestamp(t, tz).utcoffset()
    while t < end:
        nxt = datetime.fromtimestamp(t + 3600, tz).utcoffset()
        if nxt != prev:
            lo, hi = t, t + 3600
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if datetime.fromtimestamp(mid, tz).utcoffset() == prev:
                    lo = mid
                else:
                    hi = mid
            out.append((hi, prev, nxt))
            prev = nxt
        t += 3600
    return out


def fixture():
    intervals, gap_windows, repeat_windows = [], [], []
    for name in ZONES:
        tz = ZoneInfo(name)
        for at, before, after in transitions(tz):
            for every_s in (900, 420):
                lo, hi = at - 3 * 3600, at + 3 * 3600
                intervals.append({'zone': name, 'everyS': every_s, 'from': lo * 1000, 'to': hi * 1000,
                                  **interval_slots(every_s, lo, hi, tz)})
            shift = int((after - before).total_seconds())
            if shift > 0:
                # Spring forward: local times [gap_start, gap_start + shift) do not exist.
                gap_start = datetime.fromtimestamp(at - 1, tz).replace(tzinfo=None) + timedelta(seconds=1)
                start = gap_start + timedelta(seconds=shift // 2)
                start = start.replace(second=0)
                end = start + timedelta(minutes=15)
                gap_windows.append({
                    'zone': name, 'date': start.strftime('%Y-%m-%d'), 'start': start.strftime('%H:%M'),
                    'end': end.strftime('%H:%M'), 'cron': f'{start.minute} {start.hour} * * *',
                    'slotAt': at * 1000, 'opensAt': at * 1000, 'closesAt': (at + 15 * 60) * 1000,
                })
            else:
                # Fall back: local times [at + after, at + before) (as wall clock) occur twice.
                repeat_start = datetime.fromtimestamp(at, tz).replace(tzinfo=None)
                start = repeat_start + timedelta(minutes=10)
                end = start + timedelta(minutes=10)
                first = datetime(*start.timetuple()[:6], tzinfo=tz, fold=0)
                second_end = datetime(*end.timetuple()[:6], tzinfo=tz, fold=1)
                repeat_windows.append({
                    'zone': name, 'date': start.strftime('%Y-%m-%d'), 'start': start.strftime('%H:%M'),
                    'end': end.strftime('%H:%M'),
                    'opensAt': int(first.timestamp()) * 1000, 'closesAt': int(second_end.timestamp()) * 1000,
                })
    return {
        'generatedBy': '/usr/bin/python3 src-main/core/jobs/schedule/dst-oracle.py fixture',
        'years': list(YEARS),
        'intervals': intervals,
        'gapWindows': gap_windows,
        'repeatWindows': repeat_windows,
    }


def main(argv):
    if argv[:1] == ['fixture']:
        json.dump(fixture(), sys.stdout, separators=(',', ':'))
        sys.stdout.write('\n')
    elif argv[:1] == ['interval'] and len(argv) >= 5:
        every_s, start, end = int(argv[1]), int(argv[2]), int(argv[3])
        out = {name: interval_slots(every_s, start, end, ZoneInfo(name)) for name in argv[4:]}
        json.dump(out, sys.stdout, separators=(',', ':'))
        sys.stdout.write('\n')
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
