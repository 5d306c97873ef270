// The calls page: filters, a sortable table of root (or all) calls, paging
// and a live view. Its state lives in the address, so any view is a link.
import { postLines, postJSON } from './api.js';
import { h, setStatus, fmtMs, fmtTime, fmtCost, fmtNum } from './dom.js';
import { callsRequest, filterOf, extraColumns, shortOp, valueAt, PAGE_SIZE, keyset, pageOf, cursorOf } from './callsquery.js';
import { totals, status, latency } from './usage.js';
import { filtersForm } from './callsform.js';
import { scorersWithVerdicts, callVerdict, fmtVerdict } from './monitorsapi.js';
import { projectPath } from './paths.js';

const LIVE_MS = 3000;

export async function render(main, ctx) {
  const p = ctx.params;
  const base = `/${encodeURIComponent(ctx.entity)}/${encodeURIComponent(ctx.project)}/calls`;
  const go = (changes) => {
    const next = new URLSearchParams(p);
    for (const [k, v] of Object.entries(changes)) {
      if (v === '' || v === null || v === undefined || v === false) next.delete(k);
      else next.set(k, v === true ? '1' : v);
    }
    const qs = next.toString();
    ctx.navigate(base + (qs ? '?' + qs : ''));
  };
  const table = h('div', { class: 'table-wrap' });
  const count = h('span', { id: 'calls-count' });
  const rows = { first: null, last: null }; // the page's rows, for the cursor buttons
  const pager = pagerOf(p, go, rows);
  // Each scorer with verdicts in the project has a column; without them
  // (or when they cannot be read) the table is as it was.
  const scorers = await scorersWithVerdicts(`${ctx.entity}/${ctx.project}`).catch(() => []);
  const judged = { scorers: scorers.map((s) => s.name), monitors: projectPath(ctx.entity, ctx.project, 'monitors') };
  main.replaceChildren(h('h1', {}, 'Calls'), filtersForm(p, go, scorers), h('div', { class: 'bar' }, count, pager), table);
  const load = async () => {
    const req = callsRequest(ctx, p);
    if (scorers.length) req.include_feedback = true;
    const calls = await postLines('/calls/stream_query', req);
    if (pageOf(p).back) calls.reverse(); // fetched nearest first
    [rows.first, rows.last] = [calls[0], calls[calls.length - 1]];
    table.replaceChildren(callsTable(calls, p, go, base, judged));
    pager.querySelector('[data-next]').disabled = calls.length < PAGE_SIZE;
    setStatus(`${calls.length} calls shown`);
  };
  await load();
  postJSON('/calls/query_stats', filterOf(ctx, p)).then((st) => {
    count.textContent = `${st.count.toLocaleString()} ${p.get('all') ? 'calls' : 'traces'}`;
  }).catch(() => {});
  if (!p.get('live')) return null;
  const timer = setInterval(() => load().catch((err) => setStatus(String(err.message))), LIVE_MS);
  return { stop: () => clearInterval(timer) };
}

// pagerOf moves a page back or on: by cursor from the rows shown when
// sorted by start, else by offset. Page 1 has no cursor.
function pagerOf(p, go, rows) {
  const { page } = pageOf(p);
  const cursor = keyset(p);
  const prev = () => (page <= 1 || !cursor || !rows.first ? { page: page - 1 || '', after: '', before: '' }
    : { page: page - 1, after: '', before: cursorOf(rows.first) });
  const next = () => (cursor && rows.last ? { page: page + 1, after: cursorOf(rows.last), before: '' } : { page: page + 1 });
  const [back, on] = p.get('dir') === 'asc' ? ['← Older', 'Newer →'] : ['← Newer', 'Older →'];
  return h('div', { class: 'pager' },
    h('button', { type: 'button', disabled: page === 0, onclick: () => go(prev()) }, back),
    h('span', {}, `Page ${page + 1}`),
    h('button', { type: 'button', 'data-next': true, onclick: () => go(next()) }, on));
}

function sortHeader(label, key, p, go) {
  const active = (p.get('sort') || 'start') === key;
  const dir = p.get('dir') === 'asc' ? 'asc' : 'desc';
  const next = active && dir === 'desc' ? 'asc' : 'desc';
  return h('th', { scope: 'col', 'aria-sort': active ? (dir === 'asc' ? 'ascending' : 'descending') : null },
    h('button', { type: 'button', class: 'sort', onclick: () => go({ sort: key, dir: next, page: '', after: '', before: '' }) },
      label, active ? (dir === 'asc' ? ' ▲' : ' ▼') : ''));
}

// verdictHeader heads a scorer's verdict column and links to the
// monitors that run it.
function verdictHeader(scorer, monitors) {
  return h('th', { scope: 'col', class: 'verdict', 'data-scorer': scorer },
    monitors ? h('a', { href: monitors, title: `Verdicts of scorer ${scorer}: its monitors` }, scorer) : scorer);
}

function verdictCell(call, scorer) {
  const v = callVerdict(call, scorer);
  if (!v) return h('td', { class: 'verdict', 'data-scorer': scorer }, '—');
  return h('td', { class: 'verdict', 'data-scorer': scorer, 'data-verdict': fmtVerdict(v.verdict), title: v.reason || null },
    fmtVerdict(v.verdict));
}

function callsTable(calls, p, go, base, judged) {
  if (!calls.length) return h('p', { class: 'empty' }, 'No calls match.');
  const extra = extraColumns(p);
  const head = h('tr', {},
    sortHeader('Op', 'op', p, go), sortHeader('Status', 'status', p, go), sortHeader('Start', 'start', p, go),
    sortHeader('Latency', 'latency', p, go), sortHeader('Tokens', 'tokens', p, go), sortHeader('Cost', 'cost', p, go),
    judged.scorers.map((s) => verdictHeader(s, judged.monitors)),
    extra.map((c) => sortHeader(c, c, p, go)));
  const rows = calls.map((c) => {
    const t = totals(c);
    const st = status(c);
    return h('tr', {},
      h('td', {}, h('a', { href: `${base}/${encodeURIComponent(c.id)}`, class: 'op' }, c.display_name || shortOp(c.op_name))),
      h('td', {}, h('span', { class: `badge ${st}` }, st)),
      h('td', {}, h('time', { datetime: c.started_at }, fmtTime(c.started_at))),
      h('td', { class: 'num' }, fmtMs(latency(c))),
      h('td', { class: 'num' }, fmtNum(t.tokens)),
      h('td', { class: 'num' }, fmtCost(t.cost)),
      judged.scorers.map((s) => verdictCell(c, s)),
      extra.map((col) => h('td', {}, cell(valueAt(c, col)))));
  });
  return h('table', { class: 'calls', 'aria-label': 'Calls' }, h('thead', {}, head), h('tbody', {}, rows));
}

function cell(v) {
  if (v === undefined || v === null) return '—';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 120 ? s.slice(0, 117) + '…' : s;
}


