// Reads of the training API (/v1/preview/...) for the training pages,
// and what those pages share: status badges and the project's models.
import { getJSON } from './api.js';
import { h, fmtTime } from './dom.js';

const V1 = '/v1/preview';

export const jobsPage = (ctx, query) => getJSON(`${V1}/training-jobs`, { entity: ctx.entity, project: ctx.project, ...query });
export const job = (id) => getJSON(`${V1}/training-jobs/${encodeURIComponent(id)}`);
export const events = (id, after) => getJSON(`${V1}/training-jobs/${encodeURIComponent(id)}/events`, { after, limit: 100 });
export const model = (id) => getJSON(`${V1}/models/${encodeURIComponent(id)}`);
export const checkpoints = (id, after) => getJSON(`${V1}/models/${encodeURIComponent(id)}/checkpoints`, { after, limit: 100, order: 'desc' });

// models maps the project's model ids to their models.
export async function models(ctx) {
  const page = await getJSON(`${V1}/models`, { entity: ctx.entity, project: ctx.project });
  return new Map(page.data.map((m) => [m.id, m]));
}

// OPEN are the states a job can still leave.
export const OPEN = ['queued', 'running'];

export function jobBadge(status) {
  return h('span', { class: `badge job-${status}` }, status);
}

export function baseOf(ctx) {
  return `/${encodeURIComponent(ctx.entity)}/${encodeURIComponent(ctx.project)}`;
}

export function modelLink(base, models, id) {
  const m = models.get(id);
  return h('a', { href: `${base}/models/${encodeURIComponent(id)}` }, m ? m.name : id);
}

// jobsTable lists jobs, each linked to its page.
export function jobsTable(jobs, base, models) {
  const th = (c, num) => h('th', { scope: 'col', class: num ? 'num' : null }, c);
  return h('table', { class: 'jobs', 'aria-label': 'Training jobs' },
    h('thead', {}, h('tr', {}, th('Job'), th('Model'), th('Kind'), th('Status'), th('Created'), th('Started'),
      th('Ended'), th('Attempts', true), th('Checkpoint step', true), th('Error'))),
    h('tbody', {}, jobs.map((j) => h('tr', {},
      h('td', {}, h('a', { href: `${base}/training/${encodeURIComponent(j.id)}`, class: 'job' }, j.id.slice(0, 8))),
      h('td', {}, modelLink(base, models, j.model_id)), h('td', {}, j.kind), h('td', {}, jobBadge(j.status)),
      h('td', {}, fmtTime(j.created_at)), h('td', {}, fmtTime(j.training_start)), h('td', {}, fmtTime(j.training_end)),
      h('td', { class: 'num' }, j.attempts), h('td', { class: 'num' }, j.checkpoint_step || '—'),
      h('td', { class: 'error' }, j.error_message || '')))));
}
