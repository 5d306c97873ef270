// Reads of evaluations for the evaluation pages: the project's
// Evaluation.evaluate calls, the eval_results/query endpoint that joins
// their rows, and the formatting those pages share.
import { postJSON, postLines } from './api.js';
import { h } from './dom.js';
import { projectPath } from './paths.js';

// MAX_COMPARE is the most evaluations one eval_results/query compares.
export const MAX_COMPARE = 20;
export const MAX_RUNS = 200;
export const MAX_ROWS = 1000;

const field = (f) => ({ $getField: f });
const lit = (v) => ({ $literal: v });

// evaluations lists a page of the project's evaluation runs, newest
// first: up to limit from offset. The SDK names the op by a ref
// (weave:///.../op/Evaluation.evaluate:<digest>), so the query matches
// the name inside it.
export function evaluations(ctx, offset = 0, limit = MAX_RUNS) {
  return postLines('/calls/stream_query', {
    project_id: projectID(ctx), filter: { trace_roots_only: true },
    query: { $expr: { $contains: { input: field('op_name'), substr: lit('Evaluation.evaluate') } } },
    sort_by: [{ field: 'started_at', direction: 'desc' }, { field: 'id', direction: 'desc' }], offset, limit,
  });
}

// evalResults asks eval_results/query of the project.
export function evalResults(ctx, body) {
  return postJSON(`/v2/${encodeURIComponent(ctx.entity)}/${encodeURIComponent(ctx.project)}/eval_results/query`, body);
}

// readRefs maps each ref to its value (null when unreadable).
export async function readRefs(refs) {
  const uniq = [...new Set(refs.filter((r) => typeof r === 'string' && r.startsWith('weave:///')))];
  if (!uniq.length) return new Map();
  const r = await postJSON('/refs/read_batch', { refs: uniq });
  return new Map(uniq.map((ref, i) => [ref, (r.vals || [])[i] ?? null]));
}

export const projectID = (ctx) => `${ctx.entity}/${ctx.project}`;

// refName is the object name of a weave ref, or the value as it is.
export function refName(ref) {
  if (typeof ref !== 'string' || !ref.startsWith('weave:///')) return ref ? String(ref) : '—';
  const parts = ref.slice('weave:///'.length).split('/');
  return (parts[3] || ref).split(':')[0];
}

// scoreLeaves flattens a score object to [path, value] pairs of its
// numbers and booleans: {"similarity": {"mean": 0.8}} is
// ["similarity.mean", 0.8].
export function scoreLeaves(v, prefix = '') {
  if (typeof v === 'number' || typeof v === 'boolean') return [[prefix, v]];
  if (!v || typeof v !== 'object' || Array.isArray(v)) return [];
  return Object.entries(v).flatMap(([k, x]) => scoreLeaves(x, prefix ? `${prefix}.${k}` : k));
}

export function fmtScore(v) {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'boolean') return v ? 'pass' : 'fail';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(3);
  return typeof v === 'string' ? v : JSON.stringify(v);
}

// brief shows a model output or a dataset row in one line.
export function brief(v) {
  if (v === null || v === undefined) return '—';
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return text.length > 120 ? text.slice(0, 119) + '…' : text;
}

// traceLink links a call to its trace page.
export function traceLink(ctx, id, text) {
  const href = projectPath(ctx.entity, ctx.project, 'calls', id);
  return href ? h('a', { href, class: 'trace-link' }, text || id.slice(0, 8)) : id;
}

// statusBadge shows a call's summary.weave.status.
export function statusBadge(call) {
  const st = call.summary?.weave?.status || (call.ended_at ? (call.exception ? 'error' : 'success') : 'running');
  return h('span', { class: `badge ${st}` }, st);
}

// scorerStats lists a summary evaluation's stats as [label, value]:
// the pass rate of pass/fail scores, the mean of numbers.
export function scorerStats(ev) {
  return (ev?.scorer_stats || []).map((st) => {
    const label = st.path ? `${st.scorer_key}.${st.path}` : st.scorer_key;
    return [label, st.pass_rate ?? st.numeric_mean ?? null, st.pass_rate !== null && st.pass_rate !== undefined];
  });
}

export const th = (c, num) => h('th', { scope: 'col', class: num ? 'num' : null }, c);
