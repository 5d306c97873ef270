// Threads: the project's threads, and one thread's turns with the calls
// each turn made.
import { postLines } from './api.js';
import { h, setStatus, fmtMs, fmtTime } from './dom.js';
import { shortOp } from './callsquery.js';
import { status, latency } from './usage.js';

export async function render(main, ctx) {
  const projectId = `${ctx.entity}/${ctx.project}`;
  const base = `/${encodeURIComponent(ctx.entity)}/${encodeURIComponent(ctx.project)}`;
  if (ctx.id) return thread(main, projectId, base, ctx.id);
  const threads = await postLines('/threads/stream_query', { project_id: projectId, limit: 200 });
  const rows = threads.map((t) => h('tr', {},
    h('td', {}, h('a', { href: `${base}/threads/${encodeURIComponent(t.thread_id)}` }, t.thread_id)),
    h('td', { class: 'num' }, t.turn_count), h('td', {}, fmtTime(t.start_time)), h('td', {}, fmtTime(t.last_updated)),
    h('td', { class: 'num' }, fmtMs(t.p50_turn_duration_ms)), h('td', { class: 'num' }, fmtMs(t.p99_turn_duration_ms))));
  main.replaceChildren(h('h1', {}, 'Threads'), threads.length ? h('table', { 'aria-label': 'Threads' },
    h('thead', {}, h('tr', {}, ['Thread', 'Turns', 'Started', 'Last updated', 'Turn p50', 'Turn p99'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows)) : h('p', { class: 'empty' }, 'No threads yet: calls with a thread id appear here.'));
  setStatus(`${threads.length} threads`);
  return null;
}

async function thread(main, projectId, base, id) {
  const calls = await postLines('/calls/stream_query', { project_id: projectId, filter: { thread_ids: [id] },
    sort_by: [{ field: 'started_at', direction: 'asc' }], limit: 5000 });
  const turns = calls.filter((c) => c.turn_id && c.turn_id === c.id);
  const link = (c) => h('a', { href: `${base}/calls/${encodeURIComponent(c.id)}` }, c.display_name || shortOp(c.op_name));
  const items = turns.map((t, i) => {
    const inTurn = calls.filter((c) => c.turn_id === t.id && c.id !== t.id);
    return h('li', { class: 'card' }, h('h2', {}, `Turn ${i + 1}: `, link(t)),
      h('p', {}, `${fmtTime(t.started_at)} · ${fmtMs(latency(t))} · `, h('span', { class: `badge ${status(t)}` }, status(t))),
      inTurn.length ? h('ul', {}, inTurn.map((c) => h('li', {}, link(c), ` ${fmtMs(latency(c))}`))) : null);
  });
  main.replaceChildren(h('h1', {}, 'Thread ', h('code', {}, id)),
    h('p', {}, h('a', { href: `${base}/calls?all=1&thread=${encodeURIComponent(id)}` }, `${calls.length} calls in ${turns.length} turns`)),
    h('ol', { class: 'turns' }, items));
  setStatus(`Thread with ${turns.length} turns`);
  return null;
}
