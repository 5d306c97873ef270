// Alerts of the project: its CALL_ALERT automations with their state,
// last value and history of transitions (one alert's open at
// .../alerts/{id}), refreshed every few seconds, and the form that
// creates, edits and tests them (alertform.js). Admins only, as every
// automation.
import { postJSON, ApiError } from './api.js';
import { h, setStatus, fmtTime } from './dom.js';
import { projectPath } from './paths.js';
import { alertForm } from './alertform.js';
import { describe, fmtValue, metricOf } from './alertwords.js';

const REFRESH_MS = 3000;
const HISTORY = 100;
const COLUMNS = ['Name', 'Metric', 'Condition', 'State', 'Last value', 'Evaluated', 'Changed', 'Enabled', 'Actions'];

export async function render(main, ctx) {
  const projectId = `${ctx.entity}/${ctx.project}`;
  let list;
  let hooks;
  try {
    [list, hooks] = await Promise.all([postJSON('/automations/list', { project_id: projectId }),
      postJSON('/webhooks/list', { entity: ctx.entity })]);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 403) throw err;
    main.replaceChildren(h('h1', {}, 'Alerts'), h('p', {}, 'Only admins of the entity see alerts.'));
    return null;
  }
  const view = { alerts: alertsOf(list), open: ctx.id || null, history: [], shown: '' };
  const listEl = h('div', { class: 'table-wrap', id: 'alerts-list' });

  // show draws the list unless nothing changed since it was last drawn,
  // so a refresh never moves the focus or closes what is open.
  const show = () => {
    const drawn = JSON.stringify([view.alerts, view.open, view.history]);
    if (drawn === view.shown) return;
    view.shown = drawn;
    const focused = document.activeElement && document.activeElement.dataset.key;
    listEl.replaceChildren(view.alerts.length ? alertsTable(view, ctx, actions)
      : h('p', { class: 'empty' }, 'No alerts in this project yet: create one below.'));
    if (focused) listEl.querySelector(`[data-key="${CSS.escape(focused)}"]`)?.focus();
    const firing = view.alerts.filter((a) => a.enabled && a.alert.state === 'firing').length;
    setStatus(`${view.alerts.length} alert${view.alerts.length === 1 ? '' : 's'}, ${firing} firing`);
  };
  const loadHistory = async () => {
    if (view.open && !view.alerts.some((a) => a.id === view.open)) view.open = null;
    view.history = view.open ? (await postJSON('/automations/alerts/history',
      { project_id: projectId, automation_id: view.open, limit: HISTORY })).transitions : [];
    show();
  };
  const load = async () => {
    view.alerts = alertsOf(await postJSON('/automations/list', { project_id: projectId }));
    await loadHistory();
  };
  const form = alertForm(ctx, hooks.webhooks || [], async (a) => {
    await load();
    setStatus(`Alert ${a.name} saved`);
  });
  const actions = {
    edit: (a) => form.edit(a),
    toggle: async (a) => {
      await postJSON('/automations/update', { project_id: projectId, id: a.id, enabled: !a.enabled });
      await load();
      setStatus(`Alert ${a.name} ${a.enabled ? 'disabled' : 'enabled'}`);
    },
    history: async (a) => {
      view.open = view.open === a.id ? null : a.id;
      const path = view.open ? projectPath(ctx.entity, ctx.project, 'alerts', view.open) : projectPath(ctx.entity, ctx.project, 'alerts');
      if (path) history.replaceState(null, '', path);
      await load();
    },
  };
  main.replaceChildren(h('h1', {}, 'Alerts'),
    h('p', { class: 'hint' }, 'Each alert watches a metric of the project\u2019s calls over a trailing window and ' +
      'notifies its webhook once when its condition starts to hold and once when it stops.'),
    listEl, form.el);
  await loadHistory();
  let stopped = false;
  const timer = setInterval(() => {
    load().catch((err) => { if (!stopped) setStatus(String(err.message || err)); });
  }, REFRESH_MS);
  return { stop: () => { stopped = true; clearInterval(timer); } };
}

// alertsOf keeps the CALL_ALERT automations of a list answer.
function alertsOf(list) {
  return (list.automations || []).filter((a) => a.event === 'CALL_ALERT' && a.alert);
}

function alertsTable(view, ctx, actions) {
  const run = (fn, a) => () => fn(a).catch((err) => setStatus(String(err.message || err)));
  const rows = view.alerts.flatMap((a) => {
    const c = a.condition || {};
    const deliveries = projectPath(ctx.entity, ctx.project, 'automations', a.id);
    const open = view.open === a.id;
    const row = h('tr', { 'data-id': a.id },
      h('td', {}, deliveries ? h('a', { href: deliveries, title: 'Its deliveries' }, a.name) : a.name),
      h('td', {}, metricOf(c.metric).label), h('td', { class: 'condition' }, describe(c)),
      h('td', {}, stateBadge(a)), h('td', { class: 'num' }, a.alert.evaluated_at ? fmtValue(c.metric, a.alert.value) : '—'),
      h('td', {}, fmtTime(a.alert.evaluated_at)), h('td', {}, fmtTime(a.alert.changed_at)),
      h('td', {}, a.enabled ? 'yes' : 'no'),
      h('td', { class: 'actions' },
        h('button', { type: 'button', 'data-key': `edit:${a.id}`, 'aria-label': `Edit alert ${a.name}`, onclick: () => actions.edit(a) }, 'Edit'),
        h('button', { type: 'button', 'data-key': `toggle:${a.id}`, 'aria-label': `${a.enabled ? 'Disable' : 'Enable'} alert ${a.name}`,
          onclick: run(actions.toggle, a) }, a.enabled ? 'Disable' : 'Enable'),
        h('button', { type: 'button', 'data-key': `history:${a.id}`, 'aria-label': `History of alert ${a.name}`,
          'aria-expanded': open ? 'true' : 'false', 'aria-controls': open ? `history-${a.id}` : null,
          onclick: run(actions.history, a) }, 'History')));
    return open ? [row, historyRow(a, view.history)] : [row];
  });
  return h('table', { class: 'alerts', 'aria-label': 'Alerts' },
    h('thead', {}, h('tr', {}, COLUMNS.map((c) => h('th', { scope: 'col', class: c === 'Last value' ? 'num' : null }, c)))),
    h('tbody', {}, rows));
}

// stateBadge is firing or ok; a disabled alert keeps its last state but
// is evaluated no more.
function stateBadge(a) {
  const firing = a.alert.state === 'firing';
  return h('span', { class: `badge ${firing ? 'error' : 'success'}`, 'data-state': a.alert.state },
    a.alert.state + (a.enabled ? '' : ' (disabled)'));
}

function historyRow(a, transitions) {
  const metric = (a.condition || {}).metric;
  const body = transitions.length
    ? h('table', { class: 'transitions', 'aria-label': `History of ${a.name}` },
      h('thead', {}, h('tr', {}, [['#', 'num'], ['At'], ['State'], ['Value', 'num'], ['Threshold', 'num']].map(([c, cls]) =>
        h('th', { scope: 'col', class: cls }, c)))),
      h('tbody', {}, transitions.map((t) => h('tr', {}, h('td', { class: 'num' }, t.seq), h('td', {}, fmtTime(t.at)),
        h('td', {}, h('span', { class: `badge ${t.state === 'firing' ? 'error' : 'success'}` }, t.state)),
        h('td', { class: 'num' }, fmtValue(metric, t.value)), h('td', { class: 'num' }, fmtValue(metric, t.threshold))))))
    : h('p', { class: 'empty' }, 'No transitions yet: the alert has not changed state.');
  return h('tr', { class: 'history', id: `history-${a.id}` }, h('td', { colspan: COLUMNS.length }, body));
}
