// Turns the calls page's address (its search parameters) into a
// /calls/stream_query request, so every filtered, sorted page can be
// shared as a link.
import { verdictField } from './monitorsapi.js';

export const PAGE_SIZE = 50;

// SORT_FIELDS are the built-in columns the API can sort by.
export const SORT_FIELDS = {
  op: 'op_name', status: 'summary.weave.status', start: 'started_at', latency: 'summary.weave.latency_ms',
  tokens: 'summary.weave.total_tokens', cost: 'summary.weave.cost',
};

// opNames matches an op by its plain name (OTel spans, the gateway) or
// by any version of the op ref of that name (the Weave SDKs).
export function opNames(entity, project, op) {
  return [op, `weave:///${entity}/${project}/op/${op}:*`];
}

// shortOp shows an op ref by its name.
export function shortOp(opName) {
  if (!opName || !opName.startsWith('weave:///')) return opName || '';
  const last = opName.split('/').pop();
  return last.split(':')[0];
}

const field = (f) => ({ $getField: f });
const lit = (v) => ({ $literal: v });

function conditions(p) {
  const all = [];
  const status = p.get('status');
  if (status) all.push({ $eq: [field('summary.weave.status'), lit(status)] });
  const from = p.get('from');
  if (from) all.push({ $gte: [field('started_at'), lit(Date.parse(from) / 1000)] });
  const to = p.get('to');
  if (to) all.push({ $not: [{ $gte: [field('started_at'), lit(Date.parse(to) / 1000)] }] });
  const text = p.get('q');
  if (text) {
    const has = (f) => ({ $contains: { input: field(f), substr: lit(text), case_insensitive: true } });
    all.push({ $or: [has('inputs'), has('output')] });
  }
  const verdict = verdictCondition(p);
  if (verdict) all.push(verdict);
  return all;
}

// VERDICT_OPS are the tests of a scorer's verdict the filter offers
// (vscorer names the scorer, vop the test, vval its value).
export const VERDICT_OPS = [
  { id: 'any', label: 'has a verdict' }, { id: 'true', label: 'is true' }, { id: 'false', label: 'is false' },
  { id: 'eq', label: 'equals', value: true }, { id: 'gt', label: 'is above', value: true }, { id: 'lt', label: 'is below', value: true },
];

// verdictCondition tests the verdict a scorer gave a call through the
// calls query's feedback field, so each store filters it itself; null
// when the address asks for no such test or an incomplete one.
function verdictCondition(p) {
  const scorer = p.get('vscorer');
  const op = p.get('vop') || 'any';
  const raw = (p.get('vval') || '').trim();
  if (!scorer) return null;
  const f = field(verdictField(scorer));
  const num = Number(raw);
  switch (op) {
    case 'true': return { $eq: [f, lit(true)] };
    case 'false': return { $eq: [f, lit(false)] };
    case 'eq': return raw === '' ? null : { $eq: [f, lit(raw)] };
    case 'gt': return raw === '' || !Number.isFinite(num) ? null : { $gt: [f, lit(num)] };
    case 'lt': return raw === '' || !Number.isFinite(num) ? null : { $not: [{ $gte: [f, lit(num)] }] };
    default: return { $eq: [{ $convert: { input: f, to: 'exists' } }, lit(true)] };
  }
}

// filterOf renders the structured filter and the query expression.
export function filterOf(where, p) {
  const filter = {};
  if (!p.get('all')) filter.trace_roots_only = true;
  if (p.get('op')) filter.op_names = opNames(where.entity, where.project, p.get('op'));
  if (p.get('trace')) filter.trace_ids = [p.get('trace')];
  if (p.get('thread')) filter.thread_ids = [p.get('thread')];
  const all = conditions(p);
  const out = { project_id: `${where.entity}/${where.project}`, filter };
  if (all.length) out.query = { $expr: all.length === 1 ? all[0] : { $and: all } };
  return out;
}

export function extraColumns(p) {
  return (p.get('cols') || '').split(',').map((c) => c.trim()).filter(Boolean);
}

// sortField is the API field of the sort parameter: a built-in column or
// a chosen column's path.
export function sortField(p) {
  const s = p.get('sort') || 'start';
  return SORT_FIELDS[s] || (extraColumns(p).includes(s) ? s : 'started_at');
}

// keyset reports whether the address pages by cursor: sorted by start
// (the default), the next page is the calls after the last row seen, in
// (started_at, id) order, so a deep page costs what the first one does.
// Other sorts page by offset.
export function keyset(p) {
  return sortField(p) === 'started_at';
}

// cursorOf is a row's place in the start order, for the after and
// before parameters: its started_at, '|', its id (a timestamp has no '|').
export const cursorOf = (call) => `${call.started_at}|${call.id}`;

// cursorQuery renders "after the cursor in the start order" (before it
// when back) as Weave operators only, with a redundant bound on
// started_at alone that lets a store skip blocks by range.
function cursorQuery(cursor, asc, back) {
  const cut = cursor.indexOf('|');
  const at = lit(cursor.slice(0, cut));
  const id = lit(cursor.slice(cut + 1));
  const greater = asc !== back;
  const beyond = (f, v) => (greater ? { $gt: [field(f), v] } : { $not: [{ $gte: [field(f), v] }] });
  const within = greater ? { $gte: [field('started_at'), at] } : { $not: [{ $gt: [field('started_at'), at] }] };
  return { $and: [within, { $or: [beyond('started_at', at), { $and: [{ $eq: [field('started_at'), at] }, beyond('id', id)] }] }] };
}

// pageOf reads which page the address asks for: a cursor (after or
// before a row, keyset sorts only) or an offset.
export function pageOf(p) {
  const page = Math.max(0, parseInt(p.get('page') || '0', 10) || 0);
  const after = p.get('after');
  const before = p.get('before');
  const cursor = keyset(p) && (after || before);
  return { page, cursor: cursor && cursor.includes('|') ? cursor : '', back: !after && !!before };
}

export function callsRequest(where, p) {
  const { page, cursor, back } = pageOf(p);
  const asc = p.get('dir') === 'asc';
  const req = filterOf(where, p);
  if (cursor) {
    const q = cursorQuery(cursor, asc, back);
    req.query = { $expr: req.query ? { $and: [req.query.$expr, q] } : q };
  }
  const dir = asc !== back ? 'asc' : 'desc';
  const sortBy = keyset(p) ? [{ field: 'started_at', direction: dir }, { field: 'id', direction: dir }]
    : [{ field: sortField(p), direction: asc ? 'asc' : 'desc' }];
  return {
    ...req,
    sort_by: sortBy,
    limit: PAGE_SIZE, offset: cursor ? 0 : page * PAGE_SIZE, include_costs: true,
    columns: ['id', 'trace_id', 'parent_id', 'op_name', 'display_name', 'started_at', 'ended_at', 'exception', 'summary',
      ...extraColumns(p).map((c) => c.split('.')[0]).filter((c) => ['inputs', 'output', 'attributes'].includes(c))],
  };
}

// valueAt reads a dotted path of a call for a chosen column.
export function valueAt(call, path) {
  let v = call;
  for (const k of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = v[k];
  }
  return v;
}
