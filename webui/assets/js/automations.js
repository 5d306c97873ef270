// Automations of the project (what event runs which webhook) and the
// entity's webhooks, with their health; an automation's page shows its
// deliveries (automation.js). Admins only.
import { postJSON, ApiError } from './api.js';
import { h, setStatus, fmtTime } from './dom.js';

export async function render(main, ctx) {
  if (ctx.id) return (await import('./automation.js')).render(main, ctx);
  let list;
  let hooks;
  try {
    [list, hooks] = await Promise.all([postJSON('/automations/list', { project_id: `${ctx.entity}/${ctx.project}` }),
      postJSON('/webhooks/list', { entity: ctx.entity })]);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 403) throw err;
    main.replaceChildren(h('h1', {}, 'Automations'), h('p', {}, 'Only admins of the entity see automations.'));
    return null;
  }
  const base = `/${encodeURIComponent(ctx.entity)}/${encodeURIComponent(ctx.project)}/automations`;
  const items = list.automations || [];
  const webhooks = hooks.webhooks || [];
  const names = new Map(webhooks.map((w) => [w.id, w.name]));
  main.replaceChildren(h('h1', {}, 'Automations'), items.length ? automationsTable(items, base, names)
    : h('p', { class: 'empty' }, 'No automations in this project.'),
  h('h2', {}, `Webhooks of ${ctx.entity}`), webhooks.length ? webhooksTable(webhooks) : h('p', { class: 'empty' }, 'No webhooks yet.'));
  setStatus(`${items.length} automations, ${webhooks.length} webhooks`);
  return null;
}

const head = (cols) => h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col' }, c))));

function automationsTable(items, base, names) {
  return h('table', { class: 'automations', 'aria-label': 'Automations' },
    head(['Name', 'Event', 'Scope', 'Webhook', 'Enabled', 'Updated']),
    h('tbody', {}, items.map((a) => h('tr', {},
      h('td', {}, h('a', { href: `${base}/${encodeURIComponent(a.id)}` }, a.name)), h('td', {}, a.event),
      h('td', {}, (a.scope && a.scope.type) || ''), h('td', {}, names.get(a.webhook_id) || a.webhook_id),
      h('td', {}, a.enabled ? 'yes' : 'no'), h('td', {}, fmtTime(a.updated_at || a.created_at))))));
}

function webhooksTable(webhooks) {
  const health = (w) => {
    if (!w.enabled) return h('span', { class: 'badge error' }, `disabled${w.disabled_reason ? ': ' + w.disabled_reason : ''}`);
    if (w.failing_since) return h('span', { class: 'badge running' }, `failing since ${fmtTime(w.failing_since)}`);
    return h('span', { class: 'badge success' }, 'ok');
  };
  return h('table', { class: 'webhooks', 'aria-label': 'Webhooks' },
    head(['Name', 'URL', 'Health', 'Access token', 'Signing secret', 'Updated']),
    h('tbody', {}, webhooks.map((w) => h('tr', {}, h('td', {}, w.name), h('td', {}, h('code', {}, w.url)),
      h('td', {}, health(w)), h('td', {}, w.access_token_secret || '—'), h('td', {}, w.secret || '—'),
      h('td', {}, fmtTime(w.updated_at || w.created_at))))));
}
