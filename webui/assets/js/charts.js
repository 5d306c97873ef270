// Charts over time for the project or one op: call count, error rate,
// latency p50/p95/p99, tokens and cost, bucketed to the chosen range.
import { postJSON } from './api.js';
import { h, setStatus, fmtMs, fmtCost } from './dom.js';
import { opNames } from './callsquery.js';
import { chart } from './svgchart.js';

const RANGES = { '1h': 3600, '24h': 86400, '7d': 7 * 86400, '30d': 30 * 86400 };
const BUCKETS = 60;

// window picks bucket width and bounds so buckets end at a whole bucket
// after now.
export function timeWindow(range, now = Date.now()) {
  const seconds = RANGES[range] || RANGES['24h'];
  const bucket = seconds / BUCKETS;
  const end = Math.ceil(now / 1000 / bucket) * bucket;
  return { bucket, start: new Date((end - seconds) * 1000).toISOString(), end: new Date(end * 1000).toISOString() };
}

export async function render(main, ctx) {
  const p = ctx.params;
  const range = RANGES[p.get('range')] ? p.get('range') : '24h';
  const w = timeWindow(range);
  const req = { project_id: `${ctx.entity}/${ctx.project}`, start: w.start, end: w.end, bucket_seconds: w.bucket, filter: {} };
  if (p.get('op')) req.filter.op_names = opNames(ctx.entity, ctx.project, p.get('op'));
  const agg = await postJSON('/calls/aggregate', req);
  main.replaceChildren(h('h1', {}, 'Charts'), form(ctx, p, range), h('div', { class: 'charts' }, figures(agg.buckets)));
  setStatus(`Charts of ${agg.buckets.length} buckets loaded`);
  return null;
}

function form(ctx, p, range) {
  const op = h('input', { id: 'c-op', name: 'op', type: 'search', value: p.get('op') || '', placeholder: 'all ops' });
  const sel = h('select', { id: 'c-range', name: 'range' }, Object.keys(RANGES).map((r) =>
    h('option', { value: r, selected: r === range }, `last ${r}`)));
  const f = h('form', { class: 'filters', 'aria-label': 'Chart range' },
    h('div', { class: 'field' }, h('label', { for: 'c-op' }, 'Op'), op),
    h('div', { class: 'field' }, h('label', { for: 'c-range' }, 'Range'), sel),
    h('button', { type: 'submit' }, 'Show'));
  f.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams({ range: sel.value });
    if (op.value.trim()) q.set('op', op.value.trim());
    ctx.navigate(`/${encodeURIComponent(ctx.entity)}/${encodeURIComponent(ctx.project)}/charts?${q}`);
  });
  return f;
}

function figures(buckets) {
  const times = buckets.map((b) => b.start);
  const col = (k) => buckets.map((b) => b[k]);
  const sum = (k) => buckets.reduce((t, b) => t + b[k], 0);
  const calls = sum('call_count');
  const errors = sum('error_count');
  const rate = buckets.map((b) => (b.call_count ? (100 * b.error_count) / b.call_count : null));
  const maxOf = (k) => Math.max(0, ...buckets.map((b) => b[k] ?? 0));
  const pct = (v) => `${v.toFixed(v < 10 ? 1 : 0)}%`;
  const int = (v) => (Number.isInteger(v) ? v.toLocaleString() : v.toFixed(1));
  return [
    chart('chart-calls', 'Calls', times, [{ name: 'calls', values: col('call_count'), kind: 'bar', cls: 's1' }], int, calls),
    chart('chart-errors', 'Error rate', times, [{ name: 'errors', values: rate, kind: 'line', cls: 's3' }], pct,
      calls ? (100 * errors) / calls : 0),
    chart('chart-latency', 'Latency p99 (max)', times, [
      { name: 'p50', values: col('latency_p50_ms'), kind: 'line', cls: 's1' },
      { name: 'p95', values: col('latency_p95_ms'), kind: 'line', cls: 's2' },
      { name: 'p99', values: col('latency_p99_ms'), kind: 'line', cls: 's3' }], fmtMs, maxOf('latency_p99_ms')),
    chart('chart-tokens', 'Tokens', times, [{ name: 'tokens', values: buckets.map((b) => b.total_tokens || b.prompt_tokens + b.completion_tokens), kind: 'bar', cls: 's2' }],
      int, buckets.reduce((t, b) => t + (b.total_tokens || b.prompt_tokens + b.completion_tokens), 0)),
    chart('chart-cost', 'Cost', times, [{ name: 'cost', values: col('cost'), kind: 'bar', cls: 's1' }], (v) => fmtCost(v) === '—' ? '$0' : fmtCost(v), sum('cost')),
  ];
}
