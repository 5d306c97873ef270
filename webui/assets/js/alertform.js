// The form that creates and edits an alert (a CALL_ALERT automation) and
// tests its condition against the project's calls now. The server is the
// one judge of what may be saved: its 400 names the field, and the form
// shows that message beside the field it names.
import { postJSON, ApiError } from './api.js';
import { h } from './dom.js';
import { projectPath } from './paths.js';
import { METRICS, COMPARATORS, metricOf, fmtValue, fmtWindow } from './alertwords.js';

// FIELDS maps the fields the server names in its errors to the form's
// inputs and their labels.
const FIELDS = {
  name: ['a-name', 'Name'],
  'condition.metric': ['a-metric', 'Metric'],
  'condition.op_names': ['a-ops', 'Op names'],
  'condition.window_seconds': ['a-window', 'Window (seconds)'],
  'condition.comparator': ['a-comparator', 'Comparator'],
  'condition.threshold': ['a-threshold', 'Threshold'],
  'condition.min_calls': ['a-min-calls', 'Min calls'],
  'condition.enforce': ['a-enforce', 'Enforce'],
  webhook_id: ['a-webhook', 'Webhook'],
  payload: ['a-payload', 'Payload'],
  enabled: ['a-enabled', 'Enabled'],
};

const PAYLOAD_HINT = '{"text": "${alert_name}: ${metric} is ${value} (${alert_state})", "calls": "${calls_url}"}';

function field(id, label, input, hint) {
  input.id = id;
  input.name = id;
  if (hint) input.setAttribute('aria-describedby', `${id}-hint`);
  return h('div', { class: 'field' }, h('label', { for: id }, label), input,
    hint ? h('span', { class: 'hint', id: `${id}-hint` }, hint) : null);
}

// fieldOf is the field an error message names ("condition.window_seconds:
// must be ..."; a 422 names it "body.<field>"), or '' when it names none
// the form has.
export function fieldOf(err) {
  if (err instanceof ApiError && err.status === 409) return 'name';
  const m = /^(?:body\.)?([a-z_]+(?:\.[a-z_]+)*):/.exec(String(err.message || ''));
  if (!m) return '';
  for (let f = m[1]; f; f = f.includes('.') ? f.slice(0, f.lastIndexOf('.')) : '') {
    if (FIELDS[f]) return f;
  }
  return '';
}

// alertForm builds the form for project ctx with the entity's webhooks;
// saved(automation) runs after each successful save.
export function alertForm(ctx, webhooks, saved) {
  const projectId = `${ctx.entity}/${ctx.project}`;
  const inputs = {
    name: h('input', { type: 'text', autocomplete: 'off', required: true }),
    metric: h('select', {}, METRICS.map((m) => h('option', { value: m.id }, `${m.label} (${m.id})`))),
    ops: h('input', { type: 'text', autocomplete: 'off', placeholder: 'chat, retrieve' }),
    window: h('input', { type: 'number', inputmode: 'numeric', step: '1' }),
    comparator: h('select', {}, COMPARATORS.map((c) => h('option', { value: c }, c))),
    threshold: h('input', { type: 'number', step: 'any' }),
    minCalls: h('input', { type: 'number', inputmode: 'numeric', step: '1' }),
    enforce: h('input', { type: 'checkbox' }),
    webhook: h('select', {}, webhooks.length ? webhooks.map((w) => h('option', { value: w.id }, `${w.name} (${w.url})`))
      : h('option', { value: '' }, 'no webhooks in this entity')),
    payload: h('textarea', { rows: 4, spellcheck: 'false', placeholder: PAYLOAD_HINT }),
    enabled: h('input', { type: 'checkbox' }),
  };
  const unit = h('span', {});
  const title = h('h2', { id: 'alert-form-title' }, 'New alert');
  const error = h('p', { id: 'alert-error', class: 'error', role: 'alert' });
  const result = h('p', { id: 'alert-test', role: 'status' });
  const submit = h('button', { type: 'submit' }, 'Create alert');
  const test = h('button', { type: 'button', id: 'alert-test-button' }, 'Test');
  const cancel = h('button', { type: 'button', hidden: true }, 'Cancel edit');
  const thresholdHint = () => { unit.textContent = metricOf(inputs.metric.value).unit; };
  inputs.metric.addEventListener('change', thresholdHint);
  const form = h('form', { class: 'alert-form card', 'aria-labelledby': 'alert-form-title', novalidate: true },
    title,
    h('div', { class: 'filters' }, field('a-name', 'Name', inputs.name), field('a-metric', 'Metric', inputs.metric),
      field('a-ops', 'Op names', inputs.ops, 'comma separated; empty watches every call'),
      field('a-window', 'Window (seconds)', inputs.window, 'trailing, 60 to 604800'),
      field('a-comparator', 'Comparator', inputs.comparator), field('a-threshold', 'Threshold', inputs.threshold, unit),
      field('a-min-calls', 'Min calls', inputs.minCalls, 'fewer calls never fire')),
    h('div', { class: 'filters' }, field('a-webhook', 'Webhook', inputs.webhook),
      field('a-payload', 'Payload (JSON template)', inputs.payload, 'empty sends {}'),
      h('div', { class: 'checks' },
        h('label', { for: 'a-enabled' }, inputs.enabled, ' Enabled'),
        h('label', { for: 'a-enforce' }, inputs.enforce, ' Enforce (a cost budget: inference is refused while it fires)'))),
    error, h('div', { class: 'pager' }, submit, test, cancel), result);
  inputs.enabled.id = 'a-enabled';
  inputs.enforce.id = 'a-enforce';

  let editing = null; // the automation being edited, null for a new one

  const clearError = () => {
    error.replaceChildren();
    form.querySelectorAll('[aria-invalid]').forEach((el) => {
      el.removeAttribute('aria-invalid');
      el.setAttribute('aria-describedby', (el.getAttribute('aria-describedby') || '').replace('alert-error', '').trim());
      if (!el.getAttribute('aria-describedby')) el.removeAttribute('aria-describedby');
    });
  };
  const showError = (err, name) => {
    const f = name || fieldOf(err);
    const message = String(err.message || err).replace(/: invalid argument$/, '');
    if (!f) {
      error.textContent = message;
      return;
    }
    const [id, label] = FIELDS[f];
    error.textContent = `${label}: ${message}`;
    const el = document.getElementById(id);
    el.setAttribute('aria-invalid', 'true');
    el.setAttribute('aria-describedby', `${el.getAttribute('aria-describedby') || ''} alert-error`.trim());
    el.focus();
  };

  // condition reads the form over the edited alert's condition, so a
  // filter or query given through the API is kept.
  const condition = () => {
    const c = { ...(editing && editing.condition) };
    for (const k of ['metric', 'op_names', 'window_seconds', 'comparator', 'threshold', 'min_calls', 'enforce']) delete c[k];
    const ops = inputs.ops.value.split(',').map((s) => s.trim()).filter(Boolean);
    c.metric = inputs.metric.value;
    if (ops.length) c.op_names = ops;
    c.window_seconds = Math.trunc(Number(inputs.window.value));
    c.comparator = inputs.comparator.value;
    c.threshold = Number(inputs.threshold.value);
    c.min_calls = Math.trunc(Number(inputs.minCalls.value));
    if (inputs.enforce.checked) c.enforce = true;
    return c;
  };
  // blank is the first number field left empty (or not a number), whose
  // value would otherwise be sent as 0.
  const blank = () => [['condition.window_seconds', inputs.window], ['condition.threshold', inputs.threshold]]
    .find(([, el]) => el.value.trim() === '' || !Number.isFinite(Number(el.value)));

  const fill = (a) => {
    editing = a;
    const c = (a && a.condition) || {};
    inputs.name.value = a ? a.name : '';
    inputs.metric.value = c.metric || 'error_rate';
    inputs.ops.value = (c.op_names || []).join(', ');
    inputs.window.value = c.window_seconds ?? 300;
    inputs.comparator.value = c.comparator || '>';
    inputs.threshold.value = c.threshold ?? '';
    inputs.minCalls.value = c.min_calls ?? 0;
    inputs.enforce.checked = !!c.enforce;
    if (a) inputs.webhook.value = a.webhook_id;
    inputs.payload.value = a && a.payload !== '{}' ? a.payload : '';
    inputs.enabled.checked = a ? a.enabled : true;
    title.textContent = a ? `Edit alert ${a.name}` : 'New alert';
    submit.textContent = a ? 'Save changes' : 'Create alert';
    cancel.hidden = !a;
    result.replaceChildren();
    delete result.dataset.state;
    clearError();
    thresholdHint();
  };

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearError();
    const missing = blank();
    if (missing) return showError(new Error(`${missing[0]}: enter a number`), missing[0]);
    const body = { project_id: projectId, name: inputs.name.value.trim(), condition: condition(),
      webhook_id: inputs.webhook.value, payload: inputs.payload.value, enabled: inputs.enabled.checked };
    submit.disabled = true;
    try {
      const out = editing
        ? await postJSON('/automations/update', { ...body, id: editing.id })
        : await postJSON('/automations/create', { ...body, scope: { type: 'project' }, event: 'CALL_ALERT' });
      fill(null);
      await saved(out.automation);
    } catch (err) {
      showError(err);
    } finally {
      submit.disabled = false;
    }
  });
  test.addEventListener('click', async () => {
    clearError();
    result.replaceChildren();
    delete result.dataset.state;
    const missing = blank();
    if (missing) return showError(new Error(`${missing[0]}: enter a number`), missing[0]);
    const c = condition();
    test.disabled = true;
    try {
      const r = await postJSON('/automations/alerts/evaluate', { project_id: projectId, condition: c });
      result.replaceChildren(...testResult(ctx, c, r));
      result.dataset.state = r.state;
    } catch (err) {
      showError(err);
    } finally {
      test.disabled = false;
    }
  });
  cancel.addEventListener('click', () => {
    fill(null);
    inputs.name.focus();
  });
  fill(null);
  return {
    el: form,
    edit(a) {
      fill(a);
      form.scrollIntoView({ block: 'nearest' });
      inputs.name.focus();
    },
  };
}

// testResult says what the condition measures now and whether it would
// fire, with a link to the window's calls when that stays on this page's
// project.
function testResult(ctx, c, r) {
  const fires = r.state === 'firing';
  const few = c.min_calls && r.calls < c.min_calls ? ` (fewer than the ${c.min_calls} calls it needs)` : '';
  const text = `Now: ${metricOf(c.metric).label} ${fmtValue(c.metric, r.value)} over ${r.calls.toLocaleString()} calls ` +
    `in the last ${fmtWindow(c.window_seconds)}${few}. It ${fires ? 'would fire' : 'would not fire'} ` +
    `(${r.comparator} ${fmtValue(c.metric, r.threshold)}).`;
  const out = [h('span', { class: `badge ${fires ? 'error' : 'success'}` }, fires ? 'would fire' : 'ok'), ' ', text];
  const link = callsLink(ctx, r.calls_url);
  if (link) out.push(' ', h('a', { href: link }, 'The window\u2019s calls'));
  return out;
}

// callsLink is calls_url as a path of this project's calls page, or null
// when it points anywhere else.
function callsLink(ctx, raw) {
  if (!raw) return null;
  let u;
  try {
    u = new URL(raw, location.origin);
  } catch {
    return null;
  }
  const calls = projectPath(ctx.entity, ctx.project, 'calls');
  return calls && u.pathname === calls ? calls + u.search : null;
}
