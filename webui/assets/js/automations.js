// Automations of the project: what event runs which webhook (admins only).
import { postJSON, ApiError } from './api.js';
import { h, setStatus, fmtTime } from './dom.js';

export async function render(main, ctx) {
  let list;
  try {
    list = await postJSON('/automations/list', { project_id: `${ctx.entity}/${ctx.project}` });
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 403) throw err;
    main.replaceChildren(h('h1', {}, 'Automations'), h('p', {}, 'Only admins of the entity see automations.'));
    return null;
  }
  const items = list.automations || [];
  main.replaceChildren(h('h1', {}, 'Automations'), items.length ? h('table', { 'aria-label': 'Automations' },
    h('thead', {}, h('tr', {}, ['Name', 'Event', 'Scope', 'Enabled', 'Updated'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, items.map((a) => h('tr', {}, h('td', {}, a.name), h('td', {}, a.event),
      h('td', {}, (a.scope && a.scope.type) || ''), h('td', {}, a.enabled ? 'yes' : 'no'),
      h('td', {}, fmtTime(a.updated_at || a.created_at))))))
    : h('p', { class: 'empty' }, 'No automations in this project.'));
  setStatus(`${items.length} automations`);
  return null;
}
