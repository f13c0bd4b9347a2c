/**
 * Preloaded (NODE_OPTIONS=--import) into the server bench/flood-split.ts measures, when
 * GAFFER_BENCH_SPLIT_FILE is set. For the probe's socket (the one whose `hello` names `latency`)
 * it notes, per request, the wall time (epoch ms, sub-ms: comparable across processes) at which
 * the server's JS read the frame (`ws` emitted it) and at which it sent the reply; and for the
 * whole process the event-loop delay (perf_hooks), the main thread's and every other thread's
 * CPU and run-queue time (/proc/self/task/<tid>/schedstat: ns on CPU, ns ready but not running,
 * timeslices); per request also the main thread's CPU and run-queue ms between the read and the
 * reply. On SIGURG the figures since the last SIGURG are written to that file as JSON and
 * everything restarts. Plain JavaScript, bench only.
 */
const file = process.env.GAFFER_BENCH_SPLIT_FILE;
if (file) {
  const { monitorEventLoopDelay, performance, PerformanceObserver } = await import('node:perf_hooks');
  const fs = await import('node:fs');
  const { default: WebSocket } = await import('ws');
  // SPLIT_TRACE_GC=1: V8 prints each collection, with its reason, on the server's stdout.
  if (process.env.SPLIT_TRACE_GC === '1') (await import('node:v8')).setFlagsFromString('--trace-gc --trace-gc-verbose=false');
  // SPLIT_V8_FLAGS: more of V8's tracing for the window (e.g. --trace-incremental-marking: why a mark-compact starts).
  if (process.env.SPLIT_V8_FLAGS) (await import('node:v8')).setFlagsFromString(process.env.SPLIT_V8_FLAGS);
  const now = () => performance.timeOrigin + performance.now();
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  let elu = performance.eventLoopUtilization();
  /** The main thread's garbage collections: kind (1 minor, 2 major, 4 incremental, 8 weak) → durations. */
  let gcs = {};
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) (gcs[e.detail?.kind ?? 0] ??= []).push(e.duration);
  }).observe({ entryTypes: ['gc'] });
  /** id → [read, sent] of the probe's requests. */
  let reqs = new Map();
  const PROBE = Symbol('probe');
  const LAST = Symbol('last');
  const emit = WebSocket.prototype.emit;
  WebSocket.prototype.emit = function (event, data, ...rest) {
    if (event === 'message' && !rest[0] && data.length < 4096) {
      const t = now();
      const text = String(Array.isArray(data) ? Buffer.concat(data) : data);
      if (!this[PROBE] && text.includes('"name":"latency"')) {
        this[PROBE] = true;
        // The agent socket writes its replies on the raw TCP socket (agent-socket.ts textFrame), not
        // through ws.send: note the reply's send where it is written.
        const raw = this._socket;
        if (raw) {
          const write = raw.write;
          raw.write = (...args) => {
            markSent(this);
            return write.apply(raw, args);
          };
        }
      }
      if (this[PROBE]) {
        try {
          const id = JSON.parse(text).id;
          this[LAST] = id;
          reqs.set(id, [t, 0, ...mainSched(), 0, 0, nicedCpu(), null]);
        } catch {
          /* not ours */
        }
      }
    }
    return emit.call(this, event, data, ...rest);
  };
  // The main thread's schedstat (ns on a CPU, ns ready but not running) at a request's read and at
  // its reply: "in" splits into its CPU, its run-queue wait and the rest (asleep: fsync, disk).
  const schedFile = `/proc/self/task/${process.pid}/schedstat`;
  const mainSched = () => {
    const [cpu, wait] = fs.readFileSync(schedFile, 'utf8').split(' ');
    return [Number(cpu), Number(wait)];
  };
  // The niced threads' (the log worker's, the export worker's) CPU ns in all: what of it falls
  // between a request's read and its reply is what background work ran while a claim was served.
  const niceOf = new Map();
  const nicedCpu = () => {
    const cpu = new Map();
    for (const tid of fs.readdirSync('/proc/self/task')) {
      try {
        let nice = niceOf.get(tid);
        if (nice === undefined) {
          const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
          nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
          if (nice > 0) niceOf.set(tid, nice); // a thread's nice is set once at its start: look again until it is
        }
        if (nice > 0) cpu.set(tid, Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
      } catch {
        /* gone */
      }
    }
    return cpu;
  };
  /** CPU ns between two nicedCpu() readings, of the threads in both (an export's worker ends and the next one starts). */
  const nicedDelta = (a, b) => {
    let ns = 0;
    for (const [tid, v] of b) if (a.has(tid)) ns += v - a.get(tid);
    return ns;
  };
  const markSent = (ws) => {
    if (ws[PROBE] && ws[LAST] !== undefined) {
      const r = reqs.get(ws[LAST]);
      if (r && r[1] === 0) {
        r[1] = now();
        [r[4], r[5]] = mainSched();
        r[7] = nicedCpu();
      }
    }
  };
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data, ...rest) {
    markSent(this);
    return send.call(this, data, ...rest);
  };
  const threads = () => {
    const out = {};
    for (const tid of fs.readdirSync('/proc/self/task')) {
      try {
        const [cpu, wait, slices] = fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').trim().split(' ').map(Number);
        const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
        out[tid] = { name, nice, cpu, wait, slices };
      } catch {
        /* gone */
      }
    }
    return out;
  };
  let t0 = threads();
  process.on('SIGURG', () => {
    const ms = (ns) => ns / 1e6;
    const u = performance.eventLoopUtilization(elu);
    const t1 = threads();
    const perThread = Object.entries(t1).map(([tid, t]) => {
      const b = t0[tid] ?? { cpu: 0, wait: 0, slices: 0 };
      return { tid: Number(tid), main: Number(tid) === process.pid, name: t.name, nice: t.nice, cpuMs: ms(t.cpu - b.cpu), runQueueMs: ms(t.wait - b.wait), slices: t.slices - b.slices };
    });
    fs.writeFileSync(
      file,
      JSON.stringify({
        loop: { p50Ms: ms(h.percentile(50)), p99Ms: ms(h.percentile(99)), maxMs: ms(h.max), elu: u.utilization },
        threads: perThread.filter((t) => t.cpuMs > 1 || t.main),
        gc: Object.fromEntries(Object.entries(gcs).map(([k, d]) => [k, { n: d.length, sumMs: d.reduce((a, b) => a + b, 0), maxMs: Math.max(...d) }])),
        requests: [...reqs].filter(([, r]) => r[1] > 0).map(([id, r]) => [id, r[0], r[1], (r[4] - r[2]) / 1e6, (r[5] - r[3]) / 1e6, nicedDelta(r[6], r[7]) / 1e6]),
      }),
    );
    h.reset();
    elu = performance.eventLoopUtilization();
    reqs = new Map();
    gcs = {};
    t0 = t1;
  });
}
