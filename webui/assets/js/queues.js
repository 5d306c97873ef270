// Annotation queues: the project's queues, and a queue's items walked one
// after another; each shows its call's display fields and the queue's
// annotation specs, and is completed (annotations saved) or skipped.
import { getJSON, postJSON, postLines } from './api.js';
import { h, setStatus, fmtTime } from './dom.js';
import { projectPath } from './paths.js';
import { jsonView } from './json.js';
import { readSpecs, specField, saveAnnotation } from './annotations.js';

const MAX_QUEUES = 200;
const MAX_ITEMS = 1000;
const DONE = ['completed', 'skipped'];

export async function render(main, ctx) {
  const projectId = `${ctx.entity}/${ctx.project}`;
  return ctx.id ? walk(main, ctx, projectId) : list(main, ctx, projectId);
}

async function list(main, ctx, projectId) {
  const queues = await postLines('/annotation_queues/query', { project_id: projectId, limit: MAX_QUEUES });
  main.replaceChildren(h('h1', {}, 'Annotation queues'), queues.length
    ? h('ul', { class: 'queues' }, queues.map((q) => h('li', {},
      h('a', { href: projectPath(ctx.entity, ctx.project, 'queues', q.id) }, q.name),
      q.description ? h('span', { class: 'hint' }, ' ' + q.description) : null)))
    : h('p', { class: 'empty' }, 'No annotation queues in this project.'));
  setStatus(`${queues.length} queues`);
  return null;
}

async function walk(main, ctx, projectId) {
  const qs = `/annotation_queues/${encodeURIComponent(ctx.id)}`;
  const { queue } = await getJSON(qs, { project_id: projectId });
  const { items } = await postJSON(`${qs}/items/query`, { project_id: projectId, include_position: true, limit: MAX_ITEMS });
  const specs = await readSpecs(projectId, queue.scorer_refs || []);
  const view = h('section', { class: 'queue-item', 'aria-label': 'Queue item' });
  main.replaceChildren(h('h1', {}, 'Queue ', queue.name), queue.description ? h('p', {}, queue.description) : '', view);
  let at = items.findIndex((it) => !DONE.includes(it.annotation_state));
  const next = () => {
    at = items.findIndex((it, i) => i > at && !DONE.includes(it.annotation_state));
    show();
  };
  const show = async () => {
    if (at < 0) {
      view.replaceChildren(h('p', { class: 'done', role: 'status' }, `All ${items.length} items of this queue are done.`));
      setStatus('Queue done');
      return;
    }
    const it = items[at];
    const read = await postJSON('/call/read', { project_id: projectId, id: it.call_id });
    view.replaceChildren(...itemView(ctx, projectId, qs, it, read.call, specs, at, items.length, (state) => {
      it.annotation_state = state;
      next();
    }));
    view.querySelector('h2').focus();
    setStatus(`Item ${at + 1} of ${items.length}`);
  };
  await show();
  return null;
}

function itemView(ctx, projectId, qs, it, call, specs, at, total, done) {
  const fields = specs.map((s) => specField(s, 'q'));
  const say = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite' });
  const progress = (state) => postJSON(`${qs}/items/${encodeURIComponent(it.id)}/progress`,
    { project_id: projectId, annotation_state: state });
  const form = h('form', { class: 'annotations', 'aria-label': 'Annotations', novalidate: true }, fields.map((f) => f.el),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Complete'),
      h('button', { type: 'button', class: 'skip-item', onclick: () => finish('skipped') }, 'Skip')), say);
  const finish = async (state) => {
    try {
      if (state === 'completed') {
        for (const f of fields) if (f.value() !== undefined) await saveAnnotation(projectId, it.call_id, f.spec, f.value(), it.queue_id);
      }
      await progress(state);
      done(state);
    } catch (err) {
      say.textContent = String(err.message || err);
    }
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (fields.some((f) => !f.valid())) say.textContent = 'Enter a valid value first';
    else finish('completed');
  });
  const trace = projectPath(ctx.entity, ctx.project, 'calls', it.call_id);
  return [
    h('h2', { tabindex: -1 }, `Item ${at + 1} of ${total}: `, it.call_op_name ? shortName(it.call_op_name) : it.call_id),
    h('p', {}, h('a', { href: trace }, 'Open the call'), h('span', { class: 'hint' }, ` started ${fmtTime(it.call_started_at)}`)),
    h('dl', { class: 'display-fields' }, (it.display_fields || []).map((p) =>
      h('div', {}, h('dt', {}, p), h('dd', {}, jsonView(pick(call, p)))))),
    form,
  ];
}

const shortName = (op) => op.replace(/^weave:\/\/\/[^/]+\/[^/]+\/op\//, '').replace(/:.*$/, '');

// pick reads a dotted path (inputs.question) from the call.
function pick(call, path) {
  let v = call;
  for (const k of path.split('.')) v = v === null || v === undefined ? undefined : v[k];
  return v === undefined ? null : v;
}
