// Monitors of the project: online scorers applied to its live calls.
// Lists each monitor with what it scores and, while the runner reports
// it, how it fares today and its recent errors; activates, deactivates
// and deletes them; lists the scorers and creates LLM-as-judge scorers
// and monitors (monitorform.js). ?monitor=NAME marks one monitor.
import { getJSON } from './api.js';
import { h, setStatus, fmtTime } from './dom.js';
import { projectPath } from './paths.js';
import { shortOp } from './callsquery.js';
import { latest, publish, remove, monitorStatus, refName, describeVerdict, kindOf } from './monitorsapi.js';
import { scorerForm, monitorForm } from './monitorform.js';

const REFRESH_MS = 5000;
const MAX_ERRORS = 5;
const COLUMNS = [['Name'], ['Active'], ['Sampling', 'num'], ['Op names'], ['Scorers'], ['Daily cap', 'num'], ['Spent today', 'num'],
  ['Scored', 'num'], ['Failed', 'num'], ['Skipped', 'num'], ['Last scored'], ['Actions']];

export async function render(main, ctx) {
  const projectId = `${ctx.entity}/${ctx.project}`;
  const [monitors, scorers, catalog, status] = await Promise.all([latest(projectId, 'Monitor'), latest(projectId, 'Scorer'),
    getJSON('/v1/models', {}, undefined, { 'Service-Project': projectId }).then((r) => (r.data || []).map((m) => m.id)).catch(() => []),
    monitorStatus(projectId)]);
  const view = { monitors, scorers, status, marked: ctx.params.get('monitor') || '', confirming: '', shown: '' };
  const listEl = h('div', { class: 'table-wrap', id: 'monitors-list' });
  const statusNote = h('p', { class: 'hint', id: 'monitors-status' });
  const scorersEl = h('div', { class: 'table-wrap', id: 'scorers-list' });

  const show = () => {
    const drawn = JSON.stringify([view.monitors, view.scorers, view.status, view.confirming]);
    if (drawn === view.shown) return;
    view.shown = drawn;
    const focused = document.activeElement && document.activeElement.dataset.key;
    statusNote.textContent = view.status ? '' : 'Status unavailable: the monitor runner does not answer, so spend, counts and errors are not shown.';
    statusNote.hidden = !!view.status;
    listEl.replaceChildren(view.monitors.length ? monitorsTable(view, ctx, actions)
      : h('p', { class: 'empty' }, 'No monitors in this project yet: create one below.'));
    scorersEl.replaceChildren(view.scorers.length ? scorersTable(view.scorers, ctx)
      : h('p', { class: 'empty' }, 'No scorers in this project yet: create one below.'));
    if (focused) listEl.querySelector(`[data-key="${CSS.escape(focused)}"]`)?.focus();
    const active = view.monitors.filter((m) => m.val.active).length;
    setStatus(`${view.monitors.length} monitor${view.monitors.length === 1 ? '' : 's'}, ${active} active`);
  };
  const load = async () => {
    const before = view.scorers.map((s) => s.ref).join(' ');
    [view.monitors, view.scorers, view.status] = await Promise.all([latest(projectId, 'Monitor'), latest(projectId, 'Scorer'),
      monitorStatus(projectId)]);
    // Redrawn only when they changed: a refresh never takes the focus
    // from a scorer being chosen.
    if (view.scorers.map((s) => s.ref).join(' ') !== before) mForm.setScorers(view.scorers);
    show();
  };
  const actions = {
    toggle: async (m) => {
      await publish(projectId, m.name, { ...m.val, active: !m.val.active });
      await load();
      setStatus(`Monitor ${m.name} ${m.val.active ? 'deactivated' : 'activated'}`);
    },
    remove: async (m) => {
      if (view.confirming !== m.name) {
        view.confirming = m.name;
        show();
        return;
      }
      view.confirming = '';
      await remove(projectId, m.name);
      await load();
      setStatus(`Monitor ${m.name} deleted`);
    },
  };
  const mForm = monitorForm(projectId, view.scorers, load);
  const sForm = scorerForm(projectId, catalog, load);
  main.replaceChildren(h('h1', {}, 'Monitors'),
    h('p', { class: 'hint' }, 'A monitor scores a sample of the live calls of its ops with its scorers; each verdict is ' +
      'feedback on the call, shown in the calls table and the trace view.'),
    statusNote, listEl, h('h2', {}, 'Scorers'), scorersEl, sForm, mForm.el);
  show();
  if (view.marked) listEl.querySelector(`tr[data-name="${CSS.escape(view.marked)}"]`)?.scrollIntoView({ block: 'center' });
  let stopped = false;
  const timer = setInterval(() => {
    load().catch((err) => { if (!stopped) setStatus(String(err.message || err)); });
  }, REFRESH_MS);
  return { stop: () => { stopped = true; clearInterval(timer); } };
}

// statusOf is the runner's report on monitor m, matched by name (a new
// version keeps its name), or null.
function statusOf(view, m) {
  return (view.status || []).find((s) => s.name === m.name || refName(s.monitor_ref) === m.name) || null;
}

const usd = (v) => (v === null || v === undefined ? '—' : `$${Number(v).toFixed(2)}`);
const count = (v) => (v === null || v === undefined ? '—' : Number(v).toLocaleString());

function monitorsTable(view, ctx, actions) {
  const run = (fn, m) => () => fn(m).catch((err) => setStatus(String(err.message || err)));
  const rows = view.monitors.flatMap((m) => {
    const v = m.val;
    const st = statusOf(view, m);
    const confirming = view.confirming === m.name;
    const row = h('tr', { 'data-name': m.name, 'aria-current': view.marked === m.name ? 'true' : null },
      h('th', { scope: 'row' }, m.name, v.description ? h('div', { class: 'hint' }, v.description) : null),
      h('td', {}, h('span', { class: `badge ${v.active ? 'success' : ''}`, 'data-active': v.active ? 'true' : 'false' },
        v.active ? 'active' : 'inactive')),
      h('td', { class: 'num' }, typeof v.sampling_rate === 'number' ? `${Math.round(v.sampling_rate * 1000) / 10} %` : '—'),
      h('td', { class: 'ops' }, (v.op_names || []).map(shortOp).join(', ') || '—'),
      h('td', { class: 'scorers' }, (v.scorers || []).map(refName).join(', ') || '—'),
      h('td', { class: 'num' }, usd(v.daily_spend_cap_usd)),
      h('td', { class: 'num', 'data-fact': 'spent' }, st ? usd(st.spend_today_usd) : '—'),
      h('td', { class: 'num', 'data-fact': 'scored' }, st ? count(st.scored) : '—'),
      h('td', { class: 'num', 'data-fact': 'failed' }, st ? count(st.failed) : '—'),
      h('td', { class: 'num', 'data-fact': 'skipped' }, st ? count(st.skipped) : '—'),
      h('td', {}, st ? fmtTime(st.last_scored_at) : '—'),
      h('td', { class: 'actions' },
        h('button', { type: 'button', 'data-key': `toggle:${m.name}`, 'aria-label': `${v.active ? 'Deactivate' : 'Activate'} monitor ${m.name}`,
          onclick: run(actions.toggle, m) }, v.active ? 'Deactivate' : 'Activate'),
        h('button', { type: 'button', 'data-key': `delete:${m.name}`,
          'aria-label': confirming ? `Confirm deleting monitor ${m.name}` : `Delete monitor ${m.name}`,
          onclick: run(actions.remove, m) }, confirming ? 'Confirm delete' : 'Delete')));
    const errs = (st && Array.isArray(st.errors) ? st.errors : []).slice(0, MAX_ERRORS);
    return errs.length ? [row, errorsRow(m, errs, ctx)] : [row];
  });
  return h('table', { class: 'monitors', 'aria-label': 'Monitors' },
    h('thead', {}, h('tr', {}, COLUMNS.map(([c, cls]) => h('th', { scope: 'col', class: cls }, c)))),
    h('tbody', {}, rows));
}

function errorsRow(m, errs, ctx) {
  const list = h('ul', { class: 'monitor-errors', 'aria-label': `Recent errors of ${m.name}` }, errs.map((e) => {
    const call = e.call_id ? projectPath(ctx.entity, ctx.project, 'calls', String(e.call_id)) : null;
    return h('li', {}, h('time', { datetime: e.at || null }, fmtTime(e.at)), ' ',
      call ? h('a', { href: call }, `call ${e.call_id}`) : 'a call', e.scorer_ref ? ` · ${refName(e.scorer_ref)}` : '',
      ': ', h('span', { class: 'error' }, String(e.message || '')));
  }));
  return h('tr', { class: 'history errors' }, h('td', { colspan: COLUMNS.length }, h('strong', {}, 'Recent errors'), list));
}

function scorersTable(scorers, ctx) {
  const rows = scorers.map((s) => {
    const v = s.val;
    const model = v.model && typeof v.model === 'object' ? v.model.llm_model_id : null;
    const prompt = String(v.scoring_prompt || '');
    const calls = projectPath(ctx.entity, ctx.project, 'calls');
    return h('tr', { 'data-name': s.name },
      h('th', { scope: 'row' }, s.name), h('td', {}, v._class_name || '—'), h('td', {}, model || '—'),
      h('td', {}, kindOf(v) ? describeVerdict(v) : '—'),
      h('td', { class: 'prompt' }, prompt.length > 80 ? prompt.slice(0, 77) + '…' : prompt || '—'),
      h('td', {}, calls ? h('a', { href: `${calls}?all=1&vscorer=${encodeURIComponent(s.name)}&vop=any` }, 'Scored calls') : '—'));
  });
  return h('table', { class: 'scorers', 'aria-label': 'Scorers' },
    h('thead', {}, h('tr', {}, ['Name', 'Class', 'Model', 'Verdict', 'Prompt', 'Calls'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows));
}
