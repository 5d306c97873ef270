// One evaluation's rows: per dataset row and trial the model's output,
// the scores, latency, tokens and cost, each linked to its trace; sorted by a
// score and filtered by a score's value, both kept in the address.
import { h, setStatus } from './dom.js';
import { projectPath } from './paths.js';
import { evalResults, scorerStats, fmtScore, brief, traceLink, th, MAX_ROWS } from './evalapi.js';

// OPS are the comparisons a score filter offers.
const OPS = { eq: '=', gte: '≥', lt: '<' };

export async function render(main, ctx) {
  const p = ctx.params;
  const res = await evalResults(ctx, rowsQuery(ctx.id, p));
  const ev = res.summary?.evaluations?.[0];
  const fields = scorerStats(ev).map(([label]) => label);
  const title = ev?.display_name || ctx.id;
  main.replaceChildren(h('h1', {}, 'Evaluation ', h('code', {}, title)),
    h('p', {}, traceLink(ctx, ctx.id, 'Open the evaluation trace')),
    statsList(ev), controls(ctx, p, fields),
    res.rows.length ? h('div', { class: 'table-wrap' }, rowsTable(ctx, res.rows)) : h('p', { class: 'empty' }, 'No rows match.'));
  setStatus(`${res.total_rows} rows${res.total_rows > res.rows.length ? `, ${res.rows.length} shown` : ''}`);
  return null;
}

// rowsQuery is the eval_results/query of the address's sort and filter.
export function rowsQuery(id, p) {
  const body = { evaluation_call_ids: [id], include_summary: true, include_raw_data_rows: true, resolve_row_refs: true, include_costs: true, limit: MAX_ROWS };
  const sort = p.get('sort');
  if (sort) body.sort_by = [{ field: `scores.${sort}`, direction: p.get('dir') === 'asc' ? 'asc' : 'desc' }];
  const f = p.get('f');
  if (f && p.has('v')) body.filters = [{ query: { $expr: scoreCondition(`scores.${f}`, p.get('op'), p.get('v')) } }];
  return body;
}

// scoreCondition compares a score with a typed value: pass and fail are
// the booleans, anything else a number.
function scoreCondition(field, op, text) {
  const t = text.trim().toLowerCase();
  const v = t === 'pass' || t === 'true' ? true : t === 'fail' || t === 'false' ? false : Number(t);
  const f = { $getField: field };
  const l = { $literal: v };
  if (op === 'gte') return { $gte: [f, l] };
  if (op === 'lt') return { $not: [{ $gte: [f, l] }] };
  return { $eq: [f, l] };
}

function statsList(ev) {
  const stats = scorerStats(ev);
  const cost = ev?.predict_total_cost;
  if (!stats.length && cost == null) return null;
  return h('dl', { class: 'facts', id: 'eval-stats' }, stats.map(([label, v, pass]) =>
    h('div', {}, h('dt', {}, label), h('dd', {}, pass ? `${(v * 100).toFixed(0)}% pass` : fmtScore(v)))),
    cost == null ? null : h('div', {}, h('dt', {}, 'Model cost'), h('dd', { 'data-fact': 'cost' }, fmtCost(cost))));
}

// fmtCost shows dollars, with the digits small sums need.
export function fmtCost(v) {
  if (v == null) return '—';
  return v >= 0.01 ? `$${v.toFixed(2)}` : `$${v.toPrecision(2)}`;
}

function controls(ctx, p, fields) {
  const opt = (v, text, on) => h('option', { value: v, selected: on }, text);
  const sort = h('select', { id: 'f-sort', name: 'sort' }, opt('', 'row id', !p.get('sort')),
    fields.map((f) => opt(f, f, p.get('sort') === f)));
  const dir = h('select', { id: 'f-dir', name: 'dir' }, opt('desc', 'highest first', p.get('dir') !== 'asc'), opt('asc', 'lowest first', p.get('dir') === 'asc'));
  const f = h('select', { id: 'f-score', name: 'f' }, opt('', 'any score', !p.get('f')), fields.map((x) => opt(x, x, p.get('f') === x)));
  const op = h('select', { id: 'f-op', name: 'op', 'aria-label': 'Comparison' }, Object.entries(OPS).map(([k, t]) => opt(k, t, (p.get('op') || 'eq') === k)));
  const v = h('input', { id: 'f-value', name: 'v', value: p.get('v') || '', placeholder: 'pass, fail or a number' });
  const field = (id, label, ...els) => h('div', { class: 'field' }, h('label', { for: id }, label), ...els);
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Sort and filter rows' },
    field('f-sort', 'Sort by', sort), field('f-dir', 'Order', dir), field('f-score', 'Score', f, op), field('f-value', 'Value', v),
    h('button', { type: 'submit' }, 'Show'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    if (sort.value) q.set('sort', sort.value), q.set('dir', dir.value);
    if (f.value && v.value.trim()) q.set('f', f.value), q.set('op', op.value), q.set('v', v.value.trim());
    const qs = q.toString();
    ctx.navigate(projectPath(ctx.entity, ctx.project, 'evaluations', ctx.id) + (qs ? '?' + qs : ''));
  });
  return form;
}

function rowsTable(ctx, rows) {
  const body = h('tbody', {});
  rows.forEach((row, i) => {
    const trials = row.evaluations.flatMap((e) => e.trials);
    trials.forEach((tr, j) => body.append(h('tr', { 'data-row': row.row_digest },
      h('td', { class: 'num' }, j === 0 ? i + 1 : ''),
      h('td', { class: 'input' }, j === 0 ? brief(row.raw_data_row) : ''),
      h('td', { class: 'output' }, brief(tr.model_output)),
      h('td', { class: 'scores' }, scoreCells(tr.scores)),
      h('td', { class: 'num' }, tr.model_latency_seconds === null ? '—' : `${tr.model_latency_seconds.toFixed(3)} s`),
      h('td', { class: 'num' }, tr.total_tokens ?? '—'),
      h('td', { class: 'num' }, fmtCost(tr.total_cost)),
      h('td', {}, traceLink(ctx, tr.predict_and_score_call_id, 'trace')))));
  });
  return h('table', { class: 'eval-rows', 'aria-label': 'Evaluation rows' },
    h('thead', {}, h('tr', {}, th('#', true), th('Dataset row'), th('Model output'), th('Scores'), th('Latency', true), th('Tokens', true), th('Cost', true), th('Trace'))),
    body);
}

// scoreCells lists a trial's scores, one line each.
export function scoreCells(scores) {
  const entries = Object.entries(scores || {});
  if (!entries.length) return '—';
  return h('ul', { class: 'score-list' }, entries.map(([k, v]) => h('li', { 'data-score': k }, `${k}: ${v && typeof v === 'object' ? Object.entries(v).map(([a, b]) => `${a} ${fmtScore(b)}`).join(', ') : fmtScore(v)}`)));
}
