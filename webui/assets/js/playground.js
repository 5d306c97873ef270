// The playground: chat messages and parameters run against one or more
// models of the inference gateway's catalog side by side, each streamed
// through the trace API's completions stream (so every run is traced),
// with tokens, cost and latency once it ends. ?call=ID starts from a
// traced LLM call's messages, model and parameters.
import { getJSON, postJSON, postLines, streamLines } from './api.js';
import { h, setStatus, fmtMs, fmtCost, fmtNum } from './dom.js';
import { isChatCall } from './playlink.js';
import { totals } from './usage.js';

const ROLES = ['system', 'user', 'assistant'];
const MAX_COLUMNS = 6;
const COST_TRIES = 20; // the traced call reaches the store shortly after the stream ends
const COST_WAIT_MS = 250;

// PARAMS are the parameters the page edits: input attributes and how a
// value is read back.
const PARAMS = [
  { name: 'temperature', label: 'Temperature', min: 0, max: 2, step: 0.1 },
  { name: 'max_tokens', label: 'Max tokens', min: 1, step: 1 },
  { name: 'top_p', label: 'Top p', min: 0, max: 1, step: 0.05 },
];

export async function render(main, ctx) {
  const projectId = `${ctx.entity}/${ctx.project}`;
  const base = `/${encodeURIComponent(ctx.entity)}/${encodeURIComponent(ctx.project)}`;
  const [catalog, from] = await Promise.all([
    getJSON('/v1/models', {}, undefined, { 'Service-Project': projectId }).then((r) => (r.data || []).map((m) => m.id)),
    ctx.params.get('call') ? readCall(projectId, ctx.params.get('call')) : null,
  ]);
  const start = from && isChatCall(from) ? from.inputs : { messages: [{ role: 'system', content: '' }, { role: 'user', content: '' }] };
  const state = { projectId, base, catalog, runs: new Set() };
  const messages = h('ol', { class: 'messages', 'aria-label': 'Messages' });
  const addMessage = (m) => {
    messages.append(messageRow(m, messages));
    renumberMessages(messages);
  };
  (start.messages.length ? start.messages : [{ role: 'user', content: '' }]).forEach((m) => addMessage(m));
  const params = h('div', { class: 'filters params' }, PARAMS.map((p) => paramField(p, start[p.name])));
  const columns = h('div', { class: 'columns' });
  const addColumn = (model) => {
    if (columns.children.length >= MAX_COLUMNS) return;
    columns.append(column(model, state, columns));
    renumber(columns);
  };
  addColumn(start.model || catalog[0] || '');
  const run = h('button', { type: 'submit', class: 'primary' }, 'Run');
  const form = h('form', { class: 'playground', 'aria-label': 'Playground' },
    h('h2', {}, 'Messages'), messages,
    h('button', { type: 'button', onclick: () => addMessage({ role: 'user', content: '' }) }, 'Add message'),
    h('h2', {}, 'Parameters'), params,
    h('div', { class: 'bar' }, h('h2', {}, 'Models'),
      h('div', { class: 'pager' }, h('button', { type: 'button', id: 'add-model', onclick: () => addColumn(catalog[0] || '') }, 'Add model'), run)),
    columns);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    runAll(form, messages, params, columns, state, run);
  });
  main.replaceChildren(...[h('h1', {}, 'Playground'),
    from ? h('p', { class: 'hint', id: 'from-call' }, isChatCall(from) ? 'Started from call ' : 'Call holds no chat messages: ',
      h('a', { href: `${base}/calls/${encodeURIComponent(from.id)}` }, from.id)) : null,
    catalog.length ? null : h('p', { class: 'empty' }, 'The inference gateway serves no models: add them under inference.models in weft.yaml.'),
    form].filter(Boolean));
  setStatus(`${catalog.length} models in the catalog`);
  return { stop: () => state.runs.forEach((c) => c.abort()) };
}

async function readCall(projectId, id) {
  const read = await postJSON('/call/read', { project_id: projectId, id });
  if (!read.call) throw new Error(`No call ${id} in ${projectId}.`);
  return read.call;
}

// text is a message's content as editable text: content parts keep
// their text, anything else its JSON.
function text(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.every((p) => p && p.type === 'text')) return content.map((p) => p.text).join('\n');
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

function messageRow(m, list) {
  const role = h('select', { name: 'role' }, ROLES.map((r) => h('option', { value: r, selected: r === m.role }, r)));
  if (!ROLES.includes(m.role)) role.append(h('option', { value: m.role, selected: true }, m.role));
  const content = h('textarea', { name: 'content', rows: 3 }, text(m.content));
  const remove = h('button', { type: 'button', onclick: () => { row.remove(); renumberMessages(list); } }, 'Remove');
  const row = h('li', { class: 'message' }, role, content, remove);
  row.label = (i) => {
    role.setAttribute('aria-label', `Role of message ${i}`);
    content.setAttribute('aria-label', `Content of message ${i}`);
    remove.setAttribute('aria-label', `Remove message ${i}`);
  };
  return row;
}

function renumberMessages(list) {
  [...list.children].forEach((row, i) => row.label(i + 1));
}

function paramField(p, value) {
  const id = `p-${p.name}`;
  return h('div', { class: 'field' }, h('label', { for: id }, p.label),
    h('input', { id, name: p.name, type: 'number', min: p.min, max: p.max, step: p.step, value: typeof value === 'number' ? value : '' }));
}

// column is one model's side: its model, output and usage.
function column(model, state, columns) {
  const select = h('select', { name: 'model', class: 'model' }, state.catalog.map((id) => h('option', { value: id, selected: id === model }, id)));
  if (model && !state.catalog.includes(model)) select.prepend(h('option', { value: model, selected: true }, `${model} (not in the catalog)`));
  const col = h('section', { class: 'column' });
  const title = h('h3', {});
  const label = h('label', {}, 'Model');
  const remove = h('button', { type: 'button', onclick: () => { col.remove(); renumber(columns); } }, 'Remove model');
  col.append(h('div', { class: 'bar' }, title, remove), h('div', { class: 'field' }, label, select),
    h('pre', { class: 'output', 'aria-live': 'polite', 'aria-busy': 'false' }), h('dl', { class: 'facts usage' }),
    h('p', { class: 'trace-link' }));
  col.number = (i) => {
    title.textContent = `Model ${i}`;
    const id = `model-${i}`;
    select.id = id;
    label.setAttribute('for', id);
    remove.setAttribute('aria-label', `Remove model ${i}`);
    col.setAttribute('aria-label', `Model ${i}`);
  };
  return col;
}

function renumber(columns) {
  const cols = [...columns.children];
  cols.forEach((c, i) => c.number(i + 1));
  for (const c of cols) c.querySelector('button').disabled = cols.length === 1;
}

function inputs(messages, params) {
  const msgs = [...messages.children].map((row) => ({ role: row.querySelector('select').value, content: row.querySelector('textarea').value }))
    .filter((m) => m.content.trim() !== '');
  const out = { messages: msgs };
  for (const p of PARAMS) {
    const v = params.querySelector(`[name=${p.name}]`).value;
    if (v !== '') out[p.name] = Number(v);
  }
  return out;
}

async function runAll(form, messages, params, columns, state, run) {
  const base = inputs(messages, params);
  if (!base.messages.length) {
    setStatus('Write a message first');
    return;
  }
  run.disabled = true;
  setStatus('Running…');
  const cols = [...columns.children];
  const results = await Promise.all(cols.map((c) => runColumn(c, base, state)));
  run.disabled = false;
  const failed = results.filter((ok) => !ok).length;
  setStatus(failed ? `${failed} of ${cols.length} runs failed` : `${cols.length} runs done`);
}

// runColumn streams one model's answer into its column; it reports
// whether the run succeeded.
async function runColumn(col, base, state) {
  const out = col.querySelector('.output');
  const facts = col.querySelector('.usage');
  const link = col.querySelector('.trace-link');
  const model = col.querySelector('select').value;
  out.textContent = '';
  out.classList.remove('error');
  facts.replaceChildren();
  link.replaceChildren();
  if (!model) {
    fail(out, 'Pick a model.');
    return false;
  }
  const ctl = new AbortController();
  state.runs.add(ctl);
  out.setAttribute('aria-busy', 'true');
  const began = performance.now();
  let first = null;
  let usage = null;
  let callId = '';
  let error = '';
  try {
    await streamLines('/completions/create_stream', {
      project_id: state.projectId, inputs: { ...base, model, stream_options: { include_usage: true } },
    }, (line) => {
      if (line._meta) callId = line._meta.weave_call_id || '';
      if (line.error) error = typeof line.error === 'string' ? line.error : JSON.stringify(line.error);
      if (line.usage) usage = line.usage;
      for (const choice of line.choices || []) {
        const piece = (choice.delta && choice.delta.content) || '';
        if (piece && first === null) first = performance.now() - began;
        out.textContent += piece;
      }
    }, ctl.signal);
  } catch (err) {
    error = String(err.message || err);
  } finally {
    state.runs.delete(ctl);
    out.setAttribute('aria-busy', 'false');
  }
  const took = performance.now() - began;
  if (error) fail(out, error);
  const fact = (k, v, name) => h('div', { 'data-fact': name }, h('dt', {}, k), h('dd', {}, v));
  const cost = h('dd', {}, '…');
  facts.replaceChildren(
    fact('Prompt tokens', fmtNum(usage && usage.prompt_tokens), 'prompt'),
    fact('Completion tokens', fmtNum(usage && usage.completion_tokens), 'completion'),
    fact('Total tokens', fmtNum(usage && usage.total_tokens), 'total'),
    fact('First token', fmtMs(first), 'first'), fact('Latency', fmtMs(took), 'latency'),
    h('div', { 'data-fact': 'cost' }, h('dt', {}, 'Cost'), cost));
  if (callId) {
    link.replaceChildren(h('a', { href: `${state.base}/calls/${encodeURIComponent(callId)}` }, 'View the traced call'));
    cost.textContent = fmtCost(await tracedCost(state.projectId, callId));
  } else {
    cost.textContent = '—';
  }
  return !error;
}

function fail(out, message) {
  out.classList.add('error');
  out.textContent += (out.textContent ? '\n' : '') + message;
}

// tracedCost is the cost the store prices the traced call at, once the
// call has reached it; 0 when it has no price or has not arrived.
async function tracedCost(projectId, id) {
  for (let i = 0; i < COST_TRIES; i++) {
    const [call] = await postLines('/calls/stream_query', {
      project_id: projectId, filter: { call_ids: [id] }, include_costs: true, limit: 1,
    }).catch(() => []);
    if (call && call.ended_at) return totals(call).cost;
    await new Promise((r) => setTimeout(r, COST_WAIT_MS));
  }
  return 0;
}
