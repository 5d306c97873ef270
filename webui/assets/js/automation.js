// One automation: its rule and payload, and its deliveries (status,
// attempts, the receiver's last answer), each of which can be sent again.
import { postJSON } from './api.js';
import { h, setStatus, fmtTime, fmtMs } from './dom.js';
import { section } from './json.js';

const DELIVERIES = 100;

export async function render(main, ctx) {
  const projectId = `${ctx.entity}/${ctx.project}`;
  const [{ automations }, { webhooks }] = await Promise.all([postJSON('/automations/list', { project_id: projectId }),
    postJSON('/webhooks/list', { entity: ctx.entity })]);
  const a = (automations || []).find((x) => x.id === ctx.id);
  if (!a) {
    main.replaceChildren(h('h1', {}, 'Automation not found'), h('p', {}, `No automation ${ctx.id} in ${projectId}.`));
    return null;
  }
  const table = h('div', { class: 'table-wrap' });
  const load = async () => {
    const { deliveries } = await postJSON('/automations/deliveries', { project_id: projectId, automation_id: a.id, limit: DELIVERIES });
    table.replaceChildren(deliveries.length ? deliveriesTable(deliveries, redeliver) : h('p', { class: 'empty' }, 'No deliveries yet.'));
    setStatus(`${deliveries.length} deliveries`);
  };
  const redeliver = async (d) => {
    await postJSON('/automations/redeliver', { project_id: projectId, delivery_id: d.id });
    await load();
    setStatus(`Delivery ${d.id} queued again`);
  };
  const hook = (webhooks || []).find((w) => w.id === a.webhook_id);
  main.replaceChildren(h('h1', {}, a.name), h('dl', { class: 'facts' }, ...facts(a, hook ? `${hook.name} (${hook.url})` : a.webhook_id)),
    section('Payload', payloadOf(a.payload), false), h('h2', {}, 'Deliveries'), table);
  await load();
  return null;
}

function facts(a, webhook) {
  const fact = (k, v) => (v ? h('div', {}, h('dt', {}, k), h('dd', {}, v)) : null);
  return [fact('Event', a.event), fact('Scope', a.scope && [a.scope.type, a.scope.collection].filter(Boolean).join(' ')),
    fact('Alias regex', a.alias_regex), fact('Collection filter', a.collection_filter), fact('Webhook', webhook),
    fact('Enabled', a.enabled ? 'yes' : 'no'), fact('Description', a.description), fact('Created by', a.created_by),
    fact('Updated', fmtTime(a.updated_at))];
}

function payloadOf(text) {
  try {
    return JSON.parse(text);
  } catch {
    return h('pre', {}, text);
  }
}

function deliveriesTable(items, redeliver) {
  const badge = (s) => h('span', { class: `badge ${s === 'delivered' ? 'success' : s === 'failed' ? 'error' : 'running'}` }, s);
  return h('table', { class: 'deliveries', 'aria-label': 'Deliveries' },
    h('thead', {}, h('tr', {}, ['Created', 'Event', 'Status', 'Attempts', 'Answer', 'Latency', 'Error', ''].map((c) =>
      h('th', { scope: 'col' }, c)))),
    h('tbody', {}, items.map((d) => h('tr', {}, h('td', {}, fmtTime(d.created_at)), h('td', {}, d.event_type),
      h('td', {}, badge(d.status)), h('td', { class: 'num' }, d.attempts), h('td', { class: 'num' }, d.response_status ?? '—'),
      h('td', { class: 'num' }, fmtMs(d.latency_ms)), h('td', { class: 'error' }, d.error || ''),
      h('td', {}, h('button', { type: 'button', 'aria-label': `Send delivery ${d.id} again`,
        onclick: (ev) => { ev.target.disabled = true; redeliver(d).catch((err) => setStatus(String(err.message))); } }, 'Redeliver'))))));
}
