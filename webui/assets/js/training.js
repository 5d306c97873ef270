// Training jobs: the project's jobs, newest first (of one model with
// ?model=), paged by cursor (?after=), and a job's page with its events,
// refreshed while the job is queued or running.
import { h, setStatus, fmtTime } from './dom.js';
import { jobsPage, job, events, models, OPEN, jobBadge, baseOf, modelLink, jobsTable } from './trainingapi.js';

const PAGE = 50;
const LIVE_MS = 3000;
const MAX_EVENT_PAGES = 10;

export async function render(main, ctx) {
  if (ctx.id) return jobPage(main, ctx);
  const base = baseOf(ctx);
  const p = ctx.params;
  const [ms, page] = await Promise.all([models(ctx), jobsPage(ctx, { model_id: p.get('model'), after: p.get('after'), limit: PAGE })]);
  const go = (q) => {
    const qs = new URLSearchParams(q).toString();
    ctx.navigate(`${base}/training` + (qs ? '?' + qs : ''));
  };
  const model = p.get('model') || '';
  main.replaceChildren(h('h1', {}, 'Training jobs'), modelFilter(ms, model, (id) => go(id ? { model: id } : {})),
    h('div', { class: 'bar' }, h('span', {}, model ? `Jobs of ${ms.get(model)?.name || model}` : 'All jobs'),
      h('div', { class: 'pager' },
        h('button', { type: 'button', disabled: !p.get('after'), onclick: () => go(model ? { model } : {}) }, '← Newest'),
        h('button', { type: 'button', 'data-next': true, disabled: !page.has_more,
          onclick: () => go({ ...(model ? { model } : {}), after: page.last_id }) }, 'Older →'))),
    page.data.length ? jobsTable(page.data, base, ms) : h('p', { class: 'empty' }, 'No training jobs in this project.'));
  setStatus(`${page.data.length} training jobs shown`);
  return null;
}

function modelFilter(ms, chosen, pick) {
  const select = h('select', { id: 'f-model', name: 'model' }, h('option', { value: '' }, 'any'),
    [...ms.values()].map((m) => h('option', { value: m.id, selected: m.id === chosen }, m.name)));
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter training jobs' },
    h('div', { class: 'field' }, h('label', { for: 'f-model' }, 'Model'), select), h('button', { type: 'submit' }, 'Show'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    pick(select.value);
  });
  return form;
}

async function jobPage(main, ctx) {
  const base = baseOf(ctx);
  const [j, ms] = await Promise.all([job(ctx.id), models(ctx)]);
  const facts = h('dl', { class: 'facts', id: 'job-facts' });
  const rows = h('tbody', {});
  const more = h('button', { type: 'button', hidden: true }, 'Load more events');
  const state = { after: '', count: 0, job: j };
  main.replaceChildren(h('h1', {}, 'Training job ', h('code', {}, j.id)), facts,
    h('h2', {}, 'Events'), h('table', { class: 'events', 'aria-label': 'Job events' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'num' }, '#'), h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col' }, 'Data'))),
      rows), more);
  const refresh = async (current) => {
    state.job = current;
    facts.replaceChildren(...jobFacts(current, base, ms));
    more.hidden = !(await loadEvents(current.id, state, rows));
    setStatus(`Job ${current.status}, ${state.count} events`);
  };
  more.addEventListener('click', () => refresh(state.job).catch((err) => setStatus(String(err.message))));
  await refresh(j);
  if (!OPEN.includes(j.status)) return null;
  const timer = setInterval(() => job(ctx.id).then(async (next) => {
    await refresh(next);
    if (!OPEN.includes(next.status)) clearInterval(timer);
  }).catch((err) => setStatus(String(err.message))), LIVE_MS);
  return { stop: () => clearInterval(timer) };
}

function jobFacts(j, base, ms) {
  const fact = (k, v) => h('div', {}, h('dt', {}, k), h('dd', {}, v));
  return [fact('Status', jobBadge(j.status)), fact('Model', modelLink(base, ms, j.model_id)),
    fact('Created', fmtTime(j.created_at)), fact('Training started', fmtTime(j.training_start)),
    fact('Training ended', fmtTime(j.training_end)), j.error_message ? fact('Error', h('span', { class: 'error' }, j.error_message)) : null]
    .filter(Boolean);
}

// loadEvents appends the events after state.after, a few pages at a
// time, and reports whether more follow.
async function loadEvents(id, state, rows) {
  for (let i = 0; i < MAX_EVENT_PAGES; i++) {
    const page = await events(id, state.after);
    for (const e of page.data) {
      state.count++;
      rows.append(h('tr', { 'data-type': e.type }, h('td', { class: 'num' }, state.count), h('td', {}, e.type),
        h('td', {}, h('code', {}, JSON.stringify(e.data ?? {})))));
    }
    if (page.last_id) state.after = page.last_id;
    if (!page.has_more) return false;
  }
  return true;
}
