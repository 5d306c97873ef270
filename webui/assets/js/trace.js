// A trace: the call tree with its waterfall beside the chosen call's
// inputs, output, exception, attributes, summary, usage, cost, online
// scorers' verdicts, feedback
// and, for calls from OpenTelemetry, the raw span.
import { postJSON, postLines } from './api.js';
import { h, setStatus, fmtMs, fmtTime, fmtCost, fmtNum } from './dom.js';
import { shortOp } from './callsquery.js';
import { modelUsage, status, latency } from './usage.js';
import { section } from './json.js';
import { treeView } from './tree.js';
import { playgroundLink } from './playlink.js';
import { feedbackSection } from './feedback.js';
import { verdictsSection } from './verdicts.js';

const MAX_TRACE_CALLS = 10000;

export async function render(main, ctx) {
  const projectId = `${ctx.entity}/${ctx.project}`;
  const base = `/${encodeURIComponent(ctx.entity)}/${encodeURIComponent(ctx.project)}`;
  const read = await postJSON('/call/read', { project_id: projectId, id: ctx.id });
  if (!read.call) {
    main.replaceChildren(h('h1', {}, 'Call not found'), h('p', {}, `No call ${ctx.id} in ${projectId}.`));
    return null;
  }
  const calls = await postLines('/calls/stream_query', {
    project_id: projectId, filter: { trace_ids: [read.call.trace_id] }, include_costs: true, include_feedback: true,
    sort_by: [{ field: 'started_at', direction: 'asc' }], limit: MAX_TRACE_CALLS,
  });
  const byId = new Map(calls.map((c) => [c.id, c]));
  const details = h('section', { class: 'details', 'aria-label': 'Call details' });
  const show = (call) => {
    details.replaceChildren(...callDetails(call, base, projectId, ctx));
    for (const b of main.querySelectorAll('.tree-row')) b.setAttribute('aria-selected', b.dataset.callId === call.id ? 'true' : 'false');
    history.replaceState(null, '', `${base}/calls/${encodeURIComponent(call.id)}`);
  };
  const tree = treeView(calls, ctx.id, show);
  main.replaceChildren(
    h('h1', {}, 'Trace ', h('code', {}, read.call.trace_id)),
    h('p', {}, h('a', { href: `${base}/calls?all=1&trace=${encodeURIComponent(read.call.trace_id)}` }, `${calls.length} calls`),
      calls.length >= MAX_TRACE_CALLS ? ` (the first ${MAX_TRACE_CALLS})` : ''),
    h('div', { class: 'trace' }, h('section', { class: 'tree-pane', 'aria-label': 'Calls of the trace' }, tree), details));
  show(byId.get(ctx.id) || read.call);
  setStatus(`Trace of ${calls.length} calls loaded`);
  return null;
}

function callDetails(call, base, projectId, ctx) {
  const attrs = { ...(call.attributes || {}) };
  const span = attrs.otel_span;
  delete attrs.otel_span;
  const out = [
    h('h2', { id: 'call-title' }, call.display_name || shortOp(call.op_name)),
    h('dl', { class: 'facts' },
      fact('Status', h('span', { class: `badge ${status(call)}` }, status(call))),
      fact('Latency', fmtMs(latency(call))), fact('Started', fmtTime(call.started_at)),
      fact('Op', call.op_name), fact('Call id', call.id),
      playgroundLink(call, base) && fact('Playground', playgroundLink(call, base)),
      call.thread_id ? fact('Thread', h('a', { href: `${base}/calls?all=1&thread=${encodeURIComponent(call.thread_id)}` }, call.thread_id)) : null),
    section('Inputs', call.inputs ?? {}),
    section('Output', call.output ?? null),
  ];
  if (call.exception) out.push(section('Exception', h('pre', { class: 'exception' }, call.exception)));
  const usage = modelUsage(call);
  if (usage.length) out.push(section('Usage and cost', usageTable(usage)));
  const verdicts = verdictsSection(call, ctx);
  if (verdicts) out.push(verdicts);
  out.push(feedbackSection(projectId, call));
  out.push(section('Attributes', attrs, false), section('Summary', call.summary ?? {}, false));
  if (span) out.push(section('Raw OpenTelemetry span', span, false));
  return out;
}

function fact(k, v) {
  return h('div', {}, h('dt', {}, k), h('dd', {}, v));
}

function usageTable(rows) {
  const sum = rows.reduce((t, r) => t + r.cost, 0);
  return h('table', { class: 'usage', 'aria-label': 'Usage and cost per model' },
    h('thead', {}, h('tr', {}, ['Model', 'Requests', 'Prompt', 'Completion', 'Total', 'Cost'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, h('td', {}, r.model), h('td', { class: 'num' }, fmtNum(r.requests)),
      h('td', { class: 'num' }, fmtNum(r.prompt)), h('td', { class: 'num' }, fmtNum(r.completion)),
      h('td', { class: 'num' }, fmtNum(r.total)), h('td', { class: 'num' }, fmtCost(r.cost))))),
    h('tfoot', {}, h('tr', {}, h('th', { scope: 'row', colspan: 5 }, 'Total'), h('td', { class: 'num' }, fmtCost(sum)))));
}
