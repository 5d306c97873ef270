// Trainable models: the project's models, and a model's page with its
// checkpoints (step, metrics), newest first, and its latest jobs.
import { h, setStatus } from './dom.js';
import { jobsPage, model, checkpoints, models, baseOf, jobsTable } from './trainingapi.js';

const MAX_METRICS = 8;

export async function render(main, ctx) {
  const base = baseOf(ctx);
  if (ctx.id) return modelPage(main, ctx, base);
  const ms = [...(await models(ctx)).values()];
  main.replaceChildren(h('h1', {}, 'Models'), ms.length ? h('table', { class: 'models', 'aria-label': 'Models' },
    h('thead', {}, h('tr', {}, ['Name', 'Base model', 'Id'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ms.map((m) => h('tr', {}, h('td', {}, h('a', { href: `${base}/models/${encodeURIComponent(m.id)}` }, m.name)),
      h('td', {}, m.base_model), h('td', {}, h('code', {}, m.id))))))
    : h('p', { class: 'empty' }, 'No trainable models in this project.'));
  setStatus(`${ms.length} models`);
  return null;
}

async function modelPage(main, ctx, base) {
  const [m, cps, jobs] = await Promise.all([model(ctx.id), checkpoints(ctx.id),
    jobsPage(ctx, { model_id: ctx.id, limit: 10 })]);
  const ms = new Map([[m.id, m]]);
  const more = h('a', { href: `${base}/training?model=${encodeURIComponent(m.id)}` }, 'All jobs of this model');
  main.replaceChildren(...[h('h1', {}, m.name, ' ', h('small', {}, m.base_model)),
    h('h2', {}, 'Checkpoints'), cps.data.length ? checkpointTable(cps.data) : h('p', { class: 'empty' }, 'No checkpoints yet.'),
    cps.has_more ? h('p', { class: 'hint' }, `The newest ${cps.data.length} checkpoints.`) : null,
    h('h2', {}, 'Latest jobs'), jobs.data.length ? jobsTable(jobs.data, base, ms) : h('p', { class: 'empty' }, 'No jobs yet.'),
    jobs.has_more ? h('p', {}, more) : null].filter(Boolean));
  setStatus(`Model ${m.name}: ${cps.data.length} checkpoints`);
  return null;
}

function checkpointTable(cps) {
  const keys = [...new Set(cps.flatMap((c) => Object.keys(c.metrics || {})))].sort().slice(0, MAX_METRICS);
  const num = (v) => (typeof v === 'number' ? (Number.isInteger(v) ? v.toLocaleString() : v.toPrecision(4)) : '—');
  return h('table', { class: 'checkpoints', 'aria-label': 'Checkpoints' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'num' }, 'Step'), keys.map((k) => h('th', { scope: 'col', class: 'num' }, k)),
      h('th', { scope: 'col' }, 'Id'))),
    h('tbody', {}, cps.map((c) => h('tr', {}, h('td', { class: 'num' }, c.step),
      keys.map((k) => h('td', { class: 'num' }, num((c.metrics || {})[k]))), h('td', {}, h('code', {}, c.id))))));
}
