// The forms of the monitors page: one publishes an LLM-as-judge scorer,
// the other a monitor that applies scorers to live calls. Each checks
// its fields before it publishes; an error names the field and marks it.
import { ApiError } from './api.js';
import { h } from './dom.js';
import { VERDICT_KINDS, verdictSchema, scorerVal, monitorVal, publish } from './monitorsapi.js';

// NAME is an object id the server accepts (storage.ValidateObjectID).
const NAME = /^[\p{L}\p{N}_.-]{1,128}$/u;
const NAME_RULE = 'use at most 128 letters, digits, ".", "-" and "_"';

const PROMPT_HINT = 'Is this answer correct and polite?\nQuestion: {inputs.question}\nAnswer: {output}';

class FieldError extends Error {
  constructor(id, message) {
    super(message);
    this.id = id;
  }
}

function field(id, label, input, hint) {
  input.id = id;
  input.name = id;
  if (hint) input.setAttribute('aria-describedby', `${id}-hint`);
  return h('div', { class: 'field', 'data-field': id }, h('label', { for: id }, label), input,
    hint ? h('span', { class: 'hint', id: `${id}-hint` }, hint) : null);
}

// errors wires a form's error line: show names the field of a
// FieldError, marks it invalid and moves the focus to it.
function errors(form, errorId, labels) {
  const line = h('p', { id: errorId, class: 'error', role: 'alert' });
  const clear = () => {
    line.replaceChildren();
    form.querySelectorAll('[aria-invalid]').forEach((el) => {
      el.removeAttribute('aria-invalid');
      const by = (el.getAttribute('aria-describedby') || '').replace(errorId, '').trim();
      if (by) el.setAttribute('aria-describedby', by);
      else el.removeAttribute('aria-describedby');
    });
  };
  const show = (err) => {
    clear();
    const el = err instanceof FieldError ? form.querySelector(`#${err.id}`) : null;
    if (!el) {
      line.textContent = String(err.message || err);
      return;
    }
    line.textContent = `${labels[err.id]}: ${err.message}`;
    el.setAttribute('aria-invalid', 'true');
    el.setAttribute('aria-describedby', `${el.getAttribute('aria-describedby') || ''} ${errorId}`.trim());
    (el.matches('fieldset') ? el.querySelector('input') || el : el).focus();
  };
  return { line, clear, show };
}

// published publishes val as object name; a refusal of the name is the
// name field's error.
async function published(projectId, name, val, id) {
  try {
    return await publish(projectId, name, val);
  } catch (e) {
    if (e instanceof ApiError && /object_id/.test(e.message)) throw new FieldError(id, e.message);
    throw e;
  }
}

const need = (ok, id, message) => {
  if (!ok) throw new FieldError(id, message);
};

// number reads an optional number input: null when empty.
function number(input, id) {
  const s = input.value.trim();
  if (s === '') return null;
  const n = Number(s);
  need(Number.isFinite(n), id, 'must be a number');
  return n;
}

// scorerForm publishes an LLM-as-judge scorer judged by a model of
// catalog; saved(name) runs after it is published.
export function scorerForm(projectId, catalog, saved) {
  const inputs = {
    name: h('input', { type: 'text', autocomplete: 'off', required: true }),
    model: h('select', {}, catalog.length ? catalog.map((m) => h('option', { value: m }, m))
      : h('option', { value: '' }, 'no models in the catalog')),
    prompt: h('textarea', { rows: 5, spellcheck: 'false', placeholder: PROMPT_HINT, required: true }),
    kind: h('select', {}, VERDICT_KINDS.map((k) => h('option', { value: k.id }, k.label))),
    min: h('input', { type: 'number', step: 'any' }),
    max: h('input', { type: 'number', step: 'any' }),
    labels: h('input', { type: 'text', autocomplete: 'off', placeholder: 'good, poor, harmful' }),
  };
  const labels = { 's-name': 'Name', 's-model': 'Model', 's-prompt': 'Prompt', 's-kind': 'Verdict',
    's-min': 'Minimum', 's-max': 'Maximum', 's-labels': 'Labels' };
  const range = h('div', { class: 'filters' }, field('s-min', 'Minimum', inputs.min), field('s-max', 'Maximum', inputs.max));
  const choices = field('s-labels', 'Labels', inputs.labels, 'comma separated');
  const kindShown = () => {
    range.hidden = inputs.kind.value !== 'number';
    choices.hidden = inputs.kind.value !== 'label';
  };
  inputs.kind.addEventListener('change', kindShown);
  const done = h('p', { role: 'status', class: 'hint' });
  const form = h('form', { class: 'alert-form card scorer-form', 'aria-labelledby': 'scorer-form-title', novalidate: true },
    h('h2', { id: 'scorer-form-title' }, 'New LLM-as-judge scorer'),
    h('div', { class: 'filters' }, field('s-name', 'Name', inputs.name), field('s-model', 'Model', inputs.model),
      field('s-kind', 'Verdict', inputs.kind)),
    range, choices,
    field('s-prompt', 'Prompt', inputs.prompt, 'variables: {output}, {inputs.<name>} or {<name>} of the call\u2019s inputs'),
    h('button', { type: 'submit' }, 'Create scorer'), done);
  const err = errors(form, 'scorer-error', labels);
  form.insertBefore(err.line, form.querySelector('button[type=submit]'));
  kindShown();

  const read = () => {
    const name = inputs.name.value.trim();
    need(name !== '', 's-name', 'give the scorer a name');
    need(NAME.test(name), 's-name', NAME_RULE);
    need(inputs.model.value !== '', 's-model', 'the gateway\u2019s catalog has no models: add one under inference.models');
    const kind = inputs.kind.value;
    let schema;
    if (kind === 'number') {
      const min = number(inputs.min, 's-min');
      const max = number(inputs.max, 's-max');
      need(min === null || max === null || min < max, 's-max', 'must be above the minimum');
      schema = verdictSchema(kind, { min, max });
    } else if (kind === 'label') {
      const list = [...new Set(inputs.labels.value.split(',').map((l) => l.trim()).filter(Boolean))];
      need(list.length >= 2, 's-labels', 'name at least two labels, comma separated');
      schema = verdictSchema(kind, { labels: list });
    } else {
      schema = verdictSchema('boolean');
    }
    const prompt = inputs.prompt.value;
    need(prompt.trim() !== '', 's-prompt', 'write what the judge is asked');
    need(/\{[A-Za-z_][\w.]*\}/.test(prompt), 's-prompt', 'use at least one variable, such as {output}');
    return { name, model: inputs.model.value, prompt, schema };
  };
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    done.textContent = '';
    try {
      const s = read();
      await published(projectId, s.name, scorerVal(s), 's-name');
      err.clear();
      form.reset();
      kindShown();
      done.textContent = `Scorer ${s.name} published`;
      await saved(s.name);
    } catch (e) {
      err.show(e);
    }
  });
  return form;
}

// monitorForm publishes a monitor applying some of scorers (each
// {name, ref}); saved(name) runs after it is published. setScorers
// redraws the scorers to choose from.
export function monitorForm(projectId, scorers, saved) {
  const inputs = {
    name: h('input', { type: 'text', autocomplete: 'off', required: true }),
    description: h('input', { type: 'text', autocomplete: 'off' }),
    ops: h('input', { type: 'text', autocomplete: 'off', placeholder: 'chat, answer' }),
    query: h('textarea', { rows: 3, spellcheck: 'false',
      placeholder: '{"$expr": {"$eq": [{"$getField": "inputs.lang"}, {"$literal": "en"}]}}' }),
    rate: h('input', { type: 'number', step: 'any', min: 0, max: 1, value: '1' }),
    cap: h('input', { type: 'number', step: 'any', min: 0 }),
    active: h('input', { type: 'checkbox', id: 'm-active', checked: true }),
  };
  const picks = h('fieldset', { id: 'm-scorers', class: 'checks scorer-picks' });
  const labels = { 'm-name': 'Name', 'm-description': 'Description', 'm-ops': 'Op names', 'm-query': 'Calls query',
    'm-rate': 'Sampling rate', 'm-cap': 'Daily spend cap (USD)', 'm-scorers': 'Scorers' };
  const setScorers = (list) => {
    // A choice made stays made when its scorer gets a new version.
    const chosen = new Set([...picks.querySelectorAll('input:checked')].map((i) => i.dataset.name));
    picks.replaceChildren(h('legend', {}, 'Scorers'), ...(list.length
      ? list.map((s) => h('label', {}, h('input', { type: 'checkbox', name: 'm-scorer', value: s.ref, 'data-name': s.name }), ' ', s.name))
      : [h('span', { class: 'hint' }, 'No scorers yet: create one above.')]));
    picks.querySelectorAll('input').forEach((i) => { i.checked = chosen.has(i.dataset.name); });
  };
  setScorers(scorers);
  const done = h('p', { role: 'status', class: 'hint' });
  const form = h('form', { class: 'alert-form card monitor-form', 'aria-labelledby': 'monitor-form-title', novalidate: true },
    h('h2', { id: 'monitor-form-title' }, 'New monitor'),
    h('div', { class: 'filters' }, field('m-name', 'Name', inputs.name), field('m-description', 'Description', inputs.description),
      field('m-ops', 'Op names', inputs.ops, 'comma separated names or op refs'),
      field('m-rate', 'Sampling rate', inputs.rate, '0 to 1: the share of matching calls scored'),
      field('m-cap', 'Daily spend cap (USD)', inputs.cap, 'empty for none')),
    field('m-query', 'Calls query (optional)', inputs.query, 'a calls query in JSON; only calls it matches are scored'),
    picks,
    h('div', { class: 'checks' }, h('label', { for: 'm-active' }, inputs.active, ' Active')),
    h('button', { type: 'submit' }, 'Create monitor'), done);
  const err = errors(form, 'monitor-error', labels);
  form.insertBefore(err.line, form.querySelector('button[type=submit]'));

  const read = () => {
    const name = inputs.name.value.trim();
    need(name !== '', 'm-name', 'give the monitor a name');
    need(NAME.test(name), 'm-name', NAME_RULE);
    const opNames = [...new Set(inputs.ops.value.split(',').map((o) => o.trim()).filter(Boolean))];
    need(opNames.length > 0, 'm-ops', 'name at least one op to score');
    let query = null;
    if (inputs.query.value.trim() !== '') {
      try {
        query = JSON.parse(inputs.query.value);
      } catch {
        throw new FieldError('m-query', 'is not valid JSON');
      }
      need(query !== null && typeof query === 'object' && !Array.isArray(query) && query.$expr && typeof query.$expr === 'object',
        'm-query', 'must be an object with an "$expr"');
    }
    const rate = number(inputs.rate, 'm-rate');
    need(rate !== null && rate >= 0 && rate <= 1, 'm-rate', 'must be between 0 and 1');
    const cap = number(inputs.cap, 'm-cap');
    need(cap === null || cap >= 0, 'm-cap', 'must not be negative');
    const chosen = [...picks.querySelectorAll('input:checked')].map((i) => i.value);
    need(chosen.length > 0, 'm-scorers', 'choose at least one scorer');
    return { name, description: inputs.description.value.trim(), opNames, query, samplingRate: rate, cap,
      scorers: chosen, active: inputs.active.checked };
  };
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    done.textContent = '';
    try {
      const m = read();
      await published(projectId, m.name, monitorVal(m), 'm-name');
      err.clear();
      form.reset();
      picks.querySelectorAll('input').forEach((i) => { i.checked = false; });
      done.textContent = `Monitor ${m.name} published`;
      await saved(m.name);
    } catch (e) {
      err.show(e);
    }
  });
  return { el: form, setScorers };
}
