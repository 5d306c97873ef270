// Evaluations of the project: every Evaluation.evaluate run, newest
// first, with its model, dataset, status, rows and summary scores; pick
// two or more to compare them; MAX_RUNS a page, the page in the address
// (?page=N). One evaluation's rows are at
// .../evaluations/{call_id} (evalrun.js), a comparison at
// .../evaluations/compare?ids=A,B (evalcompare.js).
import { h, setStatus, fmtTime } from './dom.js';
import { projectPath } from './paths.js';
import { evaluations, evalResults, readRefs, refName, scoreLeaves, fmtScore, statusBadge, traceLink, th, MAX_COMPARE, MAX_RUNS } from './evalapi.js';

export async function render(main, ctx) {
  if (ctx.id === 'compare') return (await import('./evalcompare.js')).render(main, ctx);
  if (ctx.id) return (await import('./evalrun.js')).render(main, ctx);
  const pageNo = Math.max(1, Number.parseInt(ctx.params.get('page') || '1', 10) || 1);
  const first = (pageNo - 1) * MAX_RUNS;
  // One more than a page tells whether an older page exists.
  const runs = await evaluations(ctx, first, MAX_RUNS + 1);
  const more = runs.length > MAX_RUNS;
  runs.length = Math.min(runs.length, MAX_RUNS);
  if (!runs.length && pageNo === 1) {
    main.replaceChildren(h('h1', {}, 'Evaluations'), h('p', { class: 'empty' }, 'No evaluations in this project yet.'));
    setStatus('0 evaluations');
    return null;
  }
  const [evals, counts] = await Promise.all([readRefs(runs.map((r) => r.inputs?.self)), trialCounts(ctx, runs)]);
  const compare = h('button', { type: 'button', id: 'compare', disabled: true }, 'Compare');
  const table = runsTable(ctx, runs, evals, counts);
  const picked = () => [...table.querySelectorAll('input[name=pick]:checked')].map((c) => c.value);
  table.addEventListener('change', () => {
    const n = picked().length;
    compare.disabled = n < 2 || n > MAX_COMPARE;
    compare.textContent = n >= 2 ? `Compare ${n}` : 'Compare';
  });
  compare.addEventListener('click', () => {
    ctx.navigate(projectPath(ctx.entity, ctx.project, 'evaluations', 'compare') + '?ids=' + picked().map(encodeURIComponent).join(','));
  });
  main.replaceChildren(h('h1', {}, 'Evaluations'),
    h('div', { class: 'bar' }, h('span', { id: 'pick-hint' }, `Pick two to ${MAX_COMPARE} evaluations to compare them.`), compare,
      pager(ctx, pageNo, more)),
    h('div', { class: 'table-wrap' }, table));
  setStatus(pageNo === 1 && !more ? `${runs.length} evaluations` : `evaluations ${first + 1}–${first + runs.length}`);
  return null;
}

// pager links the newer and older pages of evaluations.
function pager(ctx, pageNo, more) {
  const to = (n) => projectPath(ctx.entity, ctx.project, 'evaluations') + (n > 1 ? `?page=${n}` : '');
  const link = (n, text, rel) => h('a', { href: to(n), rel, 'data-page': n }, text);
  if (pageNo === 1 && !more) return null;
  return h('nav', { class: 'pager', 'aria-label': 'Evaluation pages' },
    pageNo > 1 ? link(pageNo - 1, '← Newer', 'prev') : null, ` page ${pageNo} `, more ? link(pageNo + 1, 'Older →', 'next') : null);
}

// trialCounts asks one summary of the newest runs for their scored rows;
// the list still shows when that fails (a run too large to summarize).
async function trialCounts(ctx, runs) {
  try {
    const ids = runs.slice(0, MAX_COMPARE).map((r) => r.id);
    const res = await evalResults(ctx, { evaluation_call_ids: ids, include_rows: false, include_summary: true });
    return new Map((res.summary?.evaluations || []).map((e) => [e.evaluation_call_id, e.trial_count]));
  } catch {
    return new Map();
  }
}

function runsTable(ctx, runs, evals, counts) {
  return h('table', { class: 'evaluations', 'aria-label': 'Evaluations' },
    h('thead', {}, h('tr', {}, th('Compare'), th('Evaluation'), th('Model'), th('Dataset'), th('Status'),
      th('Rows', true), th('Scores'), th('Started'), th('Trace'))),
    h('tbody', {}, runs.map((r) => {
      const ev = evals.get(r.inputs?.self);
      const name = refName(r.inputs?.self);
      const dataset = ev && typeof ev === 'object' ? ev.dataset : null;
      const label = `Pick ${name} of ${refName(r.inputs?.model)} (${r.id.slice(0, 8)})`;
      return h('tr', { 'data-id': r.id },
        h('td', {}, h('input', { type: 'checkbox', name: 'pick', value: r.id, 'aria-label': label })),
        h('td', {}, h('a', { href: projectPath(ctx.entity, ctx.project, 'evaluations', r.id), class: 'eval' }, name)),
        h('td', { class: 'model' }, refName(r.inputs?.model)),
        h('td', { class: 'dataset' }, refName(dataset)),
        h('td', {}, statusBadge(r)),
        h('td', { class: 'num rows' }, counts.has(r.id) ? counts.get(r.id) : '—'),
        h('td', { class: 'scores' }, scoresList(r.output)),
        h('td', {}, fmtTime(r.started_at)),
        h('td', {}, traceLink(ctx, r.id, 'trace')));
    })));
}

// scoresList shows the summary scores of an evaluate call's output.
function scoresList(output) {
  const leaves = scoreLeaves(output).filter(([k]) => !k.startsWith('model_latency'));
  if (!leaves.length) return '—';
  return h('ul', { class: 'score-list' }, leaves.map(([k, v]) => h('li', { 'data-score': k }, `${k}: ${fmtScore(v)}`)));
}
