// The call tree of a trace with its timing waterfall.
import { h, fmtMs } from './dom.js';
import { shortOp } from './callsquery.js';
import { status, latency } from './usage.js';

// buildTree orders calls depth first, children by start time; calls whose
// parent is not in the trace are roots.
export function buildTree(calls) {
  const ids = new Set(calls.map((c) => c.id));
  const kids = new Map();
  const roots = [];
  for (const c of calls) {
    if (c.parent_id && ids.has(c.parent_id)) {
      if (!kids.has(c.parent_id)) kids.set(c.parent_id, []);
      kids.get(c.parent_id).push(c);
    } else roots.push(c);
  }
  const byStart = (a, b) => Date.parse(a.started_at) - Date.parse(b.started_at);
  const out = [];
  const walk = (c, depth) => {
    out.push({ call: c, depth });
    for (const k of (kids.get(c.id) || []).sort(byStart)) walk(k, depth + 1);
  };
  roots.sort(byStart).forEach((r) => walk(r, 0));
  return out;
}

function span(calls) {
  const start = Math.min(...calls.map((c) => Date.parse(c.started_at)));
  const end = Math.max(...calls.map((c) => (c.ended_at ? Date.parse(c.ended_at) : Date.parse(c.started_at))));
  return { start, total: Math.max(1, end - start) };
}

// treeView renders rows as buttons (Tab and arrow keys move between them);
// select is called with the chosen call.
export function treeView(calls, selectedId, select) {
  const rows = buildTree(calls);
  const { start, total } = span(calls);
  const items = rows.map(({ call, depth }) => {
    const left = ((Date.parse(call.started_at) - start) / total) * 100;
    const ms = latency(call);
    const bar = h('span', { class: `wf ${status(call)}` });
    bar.style.left = `${left}%`;
    bar.style.width = `${Math.max(0.5, ((ms ?? total * (1 - left / 100)) / total) * 100)}%`;
    const name = h('span', { class: 'name' }, call.display_name || shortOp(call.op_name));
    name.style.paddingLeft = `${depth * 1.1}rem`;
    const btn = h('button', { type: 'button', role: 'treeitem', 'aria-level': depth + 1, 'data-call-id': call.id,
      'aria-selected': call.id === selectedId ? 'true' : 'false', class: 'tree-row', onclick: () => select(call) },
    name, h('span', { class: 'dur' }, fmtMs(ms)), h('span', { class: 'track', 'aria-hidden': 'true' }, bar));
    return btn;
  });
  const tree = h('div', { role: 'tree', class: 'tree', 'aria-label': 'Call tree' }, items);
  tree.addEventListener('keydown', (ev) => {
    const i = items.indexOf(document.activeElement);
    if (i < 0) return;
    const next = ev.key === 'ArrowDown' ? items[i + 1] : ev.key === 'ArrowUp' ? items[i - 1] : null;
    if (next) {
      ev.preventDefault();
      next.focus();
    }
  });
  return tree;
}
