// Turns the calls page's address (its search parameters) into a
// /calls/stream_query request, so every filtered, sorted page can be
// shared as a link.

export const PAGE_SIZE = 50;

// SORT_FIELDS are the built-in columns the API can sort by.
export const SORT_FIELDS = {
  op: 'op_name', status: 'summary.weave.status', start: 'started_at', latency: 'summary.weave.latency_ms',
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
  return all;
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

export function callsRequest(where, p) {
  const page = Math.max(0, parseInt(p.get('page') || '0', 10) || 0);
  return {
    ...filterOf(where, p),
    sort_by: [{ field: sortField(p), direction: p.get('dir') === 'asc' ? 'asc' : 'desc' }],
    limit: PAGE_SIZE, offset: page * PAGE_SIZE, include_costs: true,
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
