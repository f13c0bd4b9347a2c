import fs from 'node:fs';
const f = fs.readdirSync('.tmp-prof').find((x) => x.endsWith('.cpuprofile'));
const p = JSON.parse(fs.readFileSync('.tmp-prof/' + f));
const self = new Map(); const byId = new Map(p.nodes.map((n) => [n.id, n]));
const dt = p.timeDeltas; let i = 0;
const counts = new Map();
for (const s of p.samples) { counts.set(s, (counts.get(s) ?? 0) + (dt[i++] ?? 0)); }
for (const [id, t] of counts) { const n = byId.get(id); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + t); }
const total = [...self.values()].reduce((a, b) => a + b, 0);
console.log('total ms', (total / 1000).toFixed(0));
for (const [k, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log((t / 1000).toFixed(1).padStart(8), k);
