// The calls page's filter form. Submitting it changes the address.
import { h } from './dom.js';
import { VERDICT_OPS } from './callsquery.js';

function field(id, label, input) {
  input.id = id;
  input.name = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), input);
}

function localValue(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
}

// verdictFields are the scorer verdict filter's inputs, for the scorers
// with verdicts in the project (and the one the address names).
function verdictFields(p, scorers) {
  const names = [...new Set([...scorers.map((s) => s.name), p.get('vscorer') || ''].filter(Boolean))];
  if (!names.length) return null;
  const labels = new Map(scorers.map((s) => [s.name, s.labels]));
  const scorer = h('select', {}, h('option', { value: '' }, 'none'), names.map((n) => h('option', { value: n, selected: p.get('vscorer') === n }, n)));
  const op = h('select', {}, VERDICT_OPS.map((o) => h('option', { value: o.id, selected: (p.get('vop') || 'any') === o.id }, o.label)));
  // A label verdict's labels are offered as the value.
  const choices = h('datalist', { id: 'f-vval-labels' });
  const value = h('input', { type: 'text', value: p.get('vval') || '', placeholder: 'label or number', autocomplete: 'off', list: 'f-vval-labels' });
  const shown = () => {
    value.parentElement.hidden = !VERDICT_OPS.find((o) => o.id === op.value)?.value;
    choices.replaceChildren(...(labels.get(scorer.value) || []).map((l) => h('option', { value: l })));
  };
  op.addEventListener('change', shown);
  scorer.addEventListener('change', shown);
  const el = h('div', { class: 'filters verdict-filter', role: 'group', 'aria-label': 'Scorer verdict' },
    field('f-vscorer', 'Verdict of scorer', scorer), field('f-vop', 'Verdict', op), field('f-vval', 'Verdict value', value), choices);
  shown();
  return { el, read: () => ({ vscorer: scorer.value, vop: scorer.value ? op.value : '', vval: scorer.value ? value.value.trim() : '' }) };
}

export function filtersForm(p, go, scorers = []) {
  const text = (name, ph) => h('input', { type: 'search', value: p.get(name) || '', placeholder: ph || '' });
  const status = h('select', {}, ['', 'success', 'error', 'running'].map((v) =>
    h('option', { value: v, selected: p.get('status') === v }, v || 'any')));
  const from = h('input', { type: 'datetime-local', value: localValue(p.get('from')) });
  const to = h('input', { type: 'datetime-local', value: localValue(p.get('to')) });
  const all = h('input', { type: 'checkbox', checked: !!p.get('all') });
  const live = h('input', { type: 'checkbox', checked: !!p.get('live') });
  const inputs = { op: text('op', 'op name'), q: text('q', 'text in inputs or output'), trace: text('trace'),
    thread: text('thread'), cols: text('cols', 'inputs.question, attributes.model') };
  const verdict = verdictFields(p, scorers);
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter calls' },
    field('f-op', 'Op', inputs.op), field('f-status', 'Status', status),
    field('f-from', 'From', from), field('f-to', 'To', to),
    field('f-trace', 'Trace id', inputs.trace), field('f-thread', 'Thread id', inputs.thread),
    field('f-q', 'Search', inputs.q), field('f-cols', 'Extra columns', inputs.cols),
    verdict ? verdict.el : null,
    h('div', { class: 'checks' },
      h('label', {}, all, ' All calls (not only roots)'), h('label', {}, live, ' Live')),
    h('button', { type: 'submit' }, 'Apply'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    go({ op: inputs.op.value.trim(), q: inputs.q.value.trim(), trace: inputs.trace.value.trim(),
      thread: inputs.thread.value.trim(), cols: inputs.cols.value.trim(), status: status.value,
      from: from.value ? new Date(from.value).toISOString() : '', to: to.value ? new Date(to.value).toISOString() : '',
      all: all.checked, live: live.checked, page: '', after: '', before: '', ...(verdict ? verdict.read() : {}) });
  });
  return form;
}
