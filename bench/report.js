'use strict';
// bench/report.js --out FILE [--load-start X --load-end Y] RUN.json...
// Folds the harness runs (one per target and N) into the comparison table and the results file.
// Ratios are Coreflow / baseline from the same invocation; the targets are the issue's.
const fs = require('fs');
const os = require('os');

const argv = process.argv.slice(2);
let out = null;
const meta = {};
const files = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--out') out = argv[++i];
  else if (argv[i] === '--load-start') meta.loadAverageStart = Number(argv[++i]);
  else if (argv[i] === '--load-end') meta.loadAverageEnd = Number(argv[++i]);
  else files.push(argv[i]);
}
const runs = files.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
const byN = new Map();
for (const r of runs) {
  if (!byN.has(r.nodes)) byN.set(r.nodes, {});
  byN.get(r.nodes)[r.label] = r;
}
const ns = [...byN.keys()].sort((a, b) => a - b);

const get = (o, p) => p.split('.').reduce((v, k) => (v == null ? undefined : v[k]), o);
const fmt = (v, d = 1) => (v == null || Number.isNaN(v) || v < 0 ? '-' : Number(v).toFixed(d));
const ratio = (a, b) => (a == null || b == null || !(b > 0) || a < 0 ? null : a / b);

// Each metric: how to read it from a run (or from the pair with the direct run).
const metrics = [
  { key: 'rps', label: 'forwarded req/s at saturation', d: 0, better: 'higher', read: (r) => get(r, 'saturation.requestsPerSecond') },
  { key: 'cpuPerReq', label: 'relay CPU us per forwarded request', d: 1, read: (r) => get(r, 'saturation.relayCpuUsPerRequest') },
  { key: 'relayCores', label: 'relay cores busy at saturation', d: 2, read: (r) => get(r, 'saturation.relayCores'), noRatio: true },
  { key: 'harnessCores', label: 'harness cores busy at saturation', d: 2, read: (r) => get(r, 'saturation.harnessCores'), noRatio: true },
  { key: 'p50', label: 'added latency p50 at 1000 req/s (us)', d: 0, read: (r, dr) => added(r, dr, 'p50Us') },
  { key: 'p99', label: 'added latency p99 at 1000 req/s (us)', d: 0, read: (r, dr) => added(r, dr, 'p99Us') },
  { key: 'p999', label: 'added latency p99.9 at 1000 req/s (us)', d: 0, read: (r, dr) => added(r, dr, 'p999Us') },
  { key: 'rssIdle', label: 'relay RSS idle with N nodes (MiB)', d: 1, read: (r) => kib(get(r, 'idle.rssKiB')) },
  { key: 'rssPerNode', label: 'RSS per idle TLS node (KiB)', d: 1, read: (r) => get(r, 'idle.rssPerNodeKiB') },
  { key: 'cpuPerConnect', label: 'relay CPU us per connect+register', d: 0, read: (r) => get(r, 'connect.relayCpuUsPerNode') },
  { key: 'connectMs', label: 'connect+register all N (ms)', d: 0, read: (r) => get(r, 'connect.wallMs') },
  { key: 'fanout', label: 'fan-out to N nodes, all acked (ms)', d: 1, read: (r) => get(r, 'fanout.medianMs') },
  { key: 'cpuPerPush', label: 'relay CPU us per pushed assignment', d: 1, read: (r) => get(r, 'fanout.relayCpuUsPerPush') },
  { key: 'stallOthers', label: 'fan-out with 1 stalled node: others acked (ms)', d: 1, read: (r) => get(r, 'stalled.othersMs') },
  { key: 'stallNode', label: 'stalled node: its 65 pushes answered (ms)', d: 0, read: (r) => get(r, 'stalled.stalledNodeMs'), noRatio: true },
  { key: 'stallRss', label: 'RSS growth while stalled (MiB)', d: 1, read: (r) => stallRss(r) },
  { key: 'waveMs', label: 're-registration wave (ms)', d: 0, read: (r) => get(r, 'wave.ms'), noRatio: true },
  { key: 'waveCpu', label: 'relay CPU us per re-registered node', d: 0, read: (r) => get(r, 'wave.relayCpuUsPerNode') },
];
function kib(v) { return v == null ? null : v / 1024; }
function stallRss(r) {
  const s = r.stalled;
  return s ? (s.rssPeakKiB - s.rssBeforeKiB) / 1024 : null;
}
function added(r, dr, k) {
  const v = get(r, `lowRate.${k}`);
  const d = get(dr, `lowRate.${k}`);
  if (v == null || v < 0) return null;
  return d == null || d < 0 ? v : Math.max(0, v - d);
}

const table = [];
const comparisons = {};
for (const n of ns) {
  const set = byN.get(n);
  const c = set.coreflow;
  const b = set.baseline;
  const d = set.direct;
  comparisons[n] = {};
  table.push(`\nN = ${n}` + (c && c.saturation && c.saturation.harnessLimited ? '   (coreflow saturation harness-limited)' : '')
    + (b && b.saturation && b.saturation.harnessLimited ? '   (baseline saturation harness-limited)' : ''));
  table.push(`  ${'metric'.padEnd(48)} ${'coreflow'.padStart(10)} ${'baseline'.padStart(10)} ${'ratio'.padStart(7)} ${'direct'.padStart(10)}`);
  for (const m of metrics) {
    const cv = c ? m.read(c, d) : null;
    const bv = b ? m.read(b, d) : null;
    const dv = d && !['p50', 'p99', 'p999'].includes(m.key) ? m.read(d, null) : (d ? get(d, `lowRate.${m.key === 'p999' ? 'p999Us' : m.key + 'Us'}`) : null);
    const rt = m.noRatio ? null : ratio(cv, bv);
    comparisons[n][m.key] = { coreflow: cv ?? null, baseline: bv ?? null, ratio: rt, direct: dv ?? null };
    const directShown = ['rps', 'p50', 'p99', 'p999', 'fanout', 'connectMs', 'waveMs', 'harnessCores'].includes(m.key);
    table.push(`  ${m.label.padEnd(48)} ${fmt(cv, m.d).padStart(10)} ${fmt(bv, m.d).padStart(10)} ${(rt == null ? '-' : rt.toFixed(2) + 'x').padStart(7)} ${(directShown ? fmt(dv, m.d) : '').padStart(10)}`);
  }
  const waveModes = `${get(c, 'wave.mode') || '-'} / ${get(b, 'wave.mode') || '-'}`;
  table.push(`  ${'wave mode (coreflow / baseline)'.padEnd(48)} ${waveModes}`);
  table.push(`  ${'wave closes with 4000 / without (coreflow)'.padEnd(48)} ${get(c, 'wave.closes4000') ?? '-'} / ${get(c, 'wave.closesWithout4000') ?? '-'}   (baseline ${get(b, 'wave.closes4000') ?? '-'} / ${get(b, 'wave.closesWithout4000') ?? '-'})${get(c, 'wave.complete') === false ? '   coreflow wave INCOMPLETE' : ''}`);
  table.push(`  ${'stalled node outcome (coreflow / baseline)'.padEnd(48)} ${stallText(c)} / ${stallText(b)}`);
}
function stallText(r) {
  const s = r && r.stalled;
  if (!s) return '-';
  return `${s.timeouts} x ${s.firstError}, ${s.ok} ok`;
}

// Targets (the issue's), evaluated at the N they name (or the largest N that ran, noted).
const largest = ns[ns.length - 1];
const at = (n) => (byN.has(n) ? n : null);
const targets = [];
function target(name, n, key, limit, kind) {
  const cmp = n != null ? comparisons[n][key] : null;
  const r = cmp ? cmp.ratio : null;
  const met = r == null ? null : kind === 'max' ? r <= limit : r >= limit;
  targets.push({ target: name, nodes: n, ratio: r, limit: `${kind === 'max' ? '<=' : '>='} ${limit}x`, met,
    coreflow: cmp ? cmp.coreflow : null, baseline: cmp ? cmp.baseline : null });
}
target('relay CPU per forwarded request @1000', at(1000), 'cpuPerReq', 0.35, 'max');
target('saturated throughput @1000', at(1000), 'rps', 2, 'min');
target('idle RSS per TLS node @10000', at(10000) ?? largest, 'rssPerNode', 0.5, 'max');
target('fan-out time @10000', at(10000) ?? largest, 'fanout', 0.5, 'max');
target('relay CPU per connect+register @10000', at(10000) ?? largest, 'cpuPerConnect', 0.5, 'max');
target('added latency p99 @1000 req/s, 1000 nodes', at(1000), 'p99', 0.5, 'max');
const c1000 = byN.has(1000) ? byN.get(1000).coreflow : null;
if (c1000 && c1000.saturation && c1000.saturation.harnessLimited)
  targets[1].note = 'coreflow was not CPU-bound at saturation (harness or machine limit); compare CPU per request';

table.push('\nTargets (ratio coreflow / baseline, same run)');
for (const t of targets) {
  table.push(`  ${t.target.padEnd(48)} ${(t.ratio == null ? '-' : t.ratio.toFixed(2) + 'x').padStart(8)}  target ${t.limit.padEnd(8)} ${t.met == null ? 'n/a' : t.met ? 'MET' : 'NOT MET'}${t.nodes !== null && !new RegExp(`@${t.nodes}\\b`).test(t.target) ? ` (measured at N=${t.nodes})` : ''}${t.note ? '  [' + t.note + ']' : ''}`);
}
console.log(table.join('\n'));

const result = {
  generatedAt: new Date().toISOString(),
  machine: { cores: os.cpus().length, cpu: os.cpus()[0] && os.cpus()[0].model, memoryGiB: os.totalmem() / 2 ** 30, ...meta },
  comparisons,
  targets,
  runs,
};
if (out) fs.writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
