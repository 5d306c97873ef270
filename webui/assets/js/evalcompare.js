// Evaluations side by side: per scorer a bar of each evaluation's
// summary score, then the dataset rows joined across them, the rows
// where their verdicts differ most first, each trial linked to its trace.
import { h, s, setStatus } from './dom.js';
import { projectPath } from './paths.js';
import { evalResults, scorerStats, fmtScore, brief, traceLink, refName, th, MAX_COMPARE, MAX_ROWS } from './evalapi.js';
import { scoreCells } from './evalrun.js';

const W = 480;
const BAR = 22;
const LABEL = 150;

export async function render(main, ctx) {
  const ids = [...new Set((ctx.params.get('ids') || '').split(',').map((x) => x.trim()).filter(Boolean))].slice(0, MAX_COMPARE);
  if (ids.length < 2) {
    main.replaceChildren(h('h1', {}, 'Compare evaluations'), h('p', { class: 'empty' },
      'Pick two or more evaluations on the ', h('a', { href: projectPath(ctx.entity, ctx.project, 'evaluations') }, 'evaluations page'), '.'));
    return null;
  }
  const first = await evalResults(ctx, { evaluation_call_ids: ids, include_rows: false, include_summary: true });
  const evs = first.summary?.evaluations || [];
  const fields = [...new Set(evs.flatMap((e) => scorerStats(e).map(([label]) => label)))];
  const body = { evaluation_call_ids: ids, include_raw_data_rows: true, resolve_row_refs: true, limit: MAX_ROWS };
  if (fields.length) body.sort_by = [{ field: `scores.${fields[0]}`, direction: 'desc', mode: 'difference' }];
  const res = await evalResults(ctx, body);
  const names = new Map(evs.map((e, i) => [e.evaluation_call_id, `${i + 1}. ${e.display_name || refName(e.model_ref)}`]));
  main.replaceChildren(h('h1', {}, 'Compare evaluations'),
    h('ol', { class: 'compared' }, evs.map((e) => h('li', {},
      h('a', { href: projectPath(ctx.entity, ctx.project, 'evaluations', e.evaluation_call_id) }, e.display_name || e.evaluation_call_id),
      ` — model ${refName(e.model_ref)} `, traceLink(ctx, e.evaluation_call_id, 'trace')))),
    h('h2', {}, 'Scores'), h('div', { class: 'charts' }, fields.map((f, i) => scoreChart(`score-${i}`, f, evs, names))),
    h('h2', {}, 'Rows', fields.length ? ` (most different ${fields[0]} first)` : ''),
    res.rows.length ? h('div', { class: 'table-wrap' }, rowsTable(ctx, res.rows, ids, names)) : h('p', { class: 'empty' }, 'No rows.'));
  setStatus(`${ids.length} evaluations, ${res.total_rows} rows compared`);
  return null;
}

// scoreChart draws one scorer's summary value per evaluation as bars.
function scoreChart(id, field, evs, names) {
  const vals = evs.map((e) => {
    const st = scorerStats(e).find(([label]) => label === field);
    return st ? { v: st[1], pass: st[2] } : null;
  });
  const max = Math.max(1e-9, ...vals.map((x) => (x && typeof x.v === 'number' ? x.v : 0)), vals.some((x) => x?.pass) ? 1 : 0);
  const hgt = evs.length * (BAR + 6) + 6;
  const svg = s('svg', { viewBox: `0 0 ${W} ${hgt}`, role: 'img', 'aria-labelledby': `${id}-title` });
  const text = [];
  evs.forEach((e, i) => {
    const x = vals[i];
    const y = 6 + i * (BAR + 6);
    const shown = x ? (x.pass ? `${(x.v * 100).toFixed(0)}% pass` : fmtScore(x.v)) : '—';
    text.push(`${names.get(e.evaluation_call_id)} ${shown}`);
    svg.append(s('text', { x: LABEL - 6, y: y + BAR * 0.7, class: 'tick', 'text-anchor': 'end' }, names.get(e.evaluation_call_id).slice(0, 22)));
    if (x && typeof x.v === 'number') {
      svg.append(s('rect', { x: LABEL, y, width: Math.max(1, (x.v / max) * (W - LABEL - 70)), height: BAR, class: `s${(i % 3) + 1}` }));
    }
    svg.append(s('text', { x: LABEL + (x && typeof x.v === 'number' ? (x.v / max) * (W - LABEL - 70) : 0) + 4, y: y + BAR * 0.7, class: 'tick' }, shown));
  });
  return h('figure', { class: 'chart', id, 'data-field': field },
    h('figcaption', { id: `${id}-title` }, `${field}: ${text.join('; ')}`), svg);
}

function rowsTable(ctx, rows, ids, names) {
  const body = h('tbody', {});
  rows.forEach((row, i) => {
    const byEval = new Map(row.evaluations.map((e) => [e.evaluation_call_id, e]));
    body.append(h('tr', { 'data-row': row.row_digest },
      h('td', { class: 'num' }, i + 1), h('td', { class: 'input' }, brief(row.raw_data_row)),
      ids.map((id) => {
        const trials = byEval.get(id)?.trials || [];
        if (!trials.length) return h('td', { class: 'trial missing' }, 'not evaluated');
        return h('td', { class: 'trial' }, trials.map((tr) => h('div', {},
          h('div', { class: 'output' }, brief(tr.model_output)), scoreCells(tr.scores), traceLink(ctx, tr.predict_and_score_call_id, 'trace'))));
      })));
  });
  return h('table', { class: 'compare-rows', 'aria-label': 'Rows compared' },
    h('thead', {}, h('tr', {}, th('#', true), th('Dataset row'), ids.map((id) => th(names.get(id) || id)))), body);
}
