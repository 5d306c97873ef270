// Objects and datasets: the latest version of each, an object's versions
// with their aliases, and a dataset's rows.
import { postJSON } from './api.js';
import { h, setStatus, fmtTime } from './dom.js';
import { section } from './json.js';

const ROWS = 100;

export async function render(main, ctx) {
  const projectId = `${ctx.entity}/${ctx.project}`;
  const base = `/${encodeURIComponent(ctx.entity)}/${encodeURIComponent(ctx.project)}`;
  if (ctx.id) return object(main, projectId, base, ctx.id, ctx.sub);
  const datasets = ctx.section === 'datasets';
  const filter = { latest_only: true, ...(datasets ? { base_object_classes: ['Dataset'] } : {}) };
  const { objs } = await postJSON('/objs/query', { project_id: projectId, filter, metadata_only: true,
    sort_by: [{ field: 'created_at', direction: 'desc' }], limit: 500 });
  const title = datasets ? 'Datasets' : 'Objects';
  const rows = objs.map((o) => h('tr', {},
    h('td', {}, h('a', { href: `${base}/objects/${encodeURIComponent(o.object_id)}` }, o.object_id)),
    h('td', {}, o.base_object_class || o.kind), h('td', { class: 'num' }, `v${o.version_index}`),
    h('td', {}, (o.aliases || []).join(', ')), h('td', {}, fmtTime(o.created_at))));
  main.replaceChildren(h('h1', {}, title), objs.length ? h('table', { 'aria-label': title },
    h('thead', {}, h('tr', {}, ['Name', 'Class', 'Latest', 'Aliases', 'Updated'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows)) : h('p', { class: 'empty' }, `No ${title.toLowerCase()} yet.`));
  setStatus(`${objs.length} ${title.toLowerCase()}`);
  return null;
}

async function object(main, projectId, base, name, digest) {
  const { objs } = await postJSON('/objs/query', { project_id: projectId, filter: { object_ids: [name] }, metadata_only: true,
    sort_by: [{ field: 'created_at', direction: 'desc' }] });
  const chosen = digest || (objs[0] && objs[0].digest);
  if (!chosen) {
    main.replaceChildren(h('h1', {}, 'Object not found'), h('p', {}, `No object ${name} in ${projectId}.`));
    return null;
  }
  const { obj } = await postJSON('/obj/read', { project_id: projectId, object_id: name, digest: chosen });
  const versions = h('ol', { class: 'versions', reversed: true }, objs.map((o) => h('li', {},
    h('a', { href: `${base}/objects/${encodeURIComponent(name)}/${o.digest}`, 'aria-current': o.digest === obj.digest ? 'page' : null },
      `v${o.version_index}`), ` ${(o.aliases || []).join(', ')} · ${fmtTime(o.created_at)}`)));
  const parts = [h('h1', {}, name, ' ', h('small', {}, `v${obj.version_index}`)),
    h('p', {}, `Digest ${obj.digest}`, (obj.aliases || []).length ? ` · aliases: ${obj.aliases.join(', ')}` : ''),
    h('div', { class: 'trace' }, h('section', { 'aria-label': 'Versions' }, h('h2', {}, 'Versions'), versions),
      h('section', { class: 'details' }, section('Value', obj.val), await rowsOf(projectId, obj.val)))];
  main.replaceChildren(...parts);
  setStatus(`Object ${name} v${obj.version_index}`);
  return null;
}

// rowsOf shows the first rows of a dataset's table, if the value has one.
async function rowsOf(projectId, val) {
  const ref = val && typeof val.rows === 'string' ? /\/table\/([0-9a-f]+)$/.exec(val.rows) : null;
  if (!ref) return '';
  const { rows } = await postJSON('/table/query', { project_id: projectId, digest: ref[1], limit: ROWS });
  const keys = [...new Set(rows.flatMap((r) => (r.val && typeof r.val === 'object' ? Object.keys(r.val) : [])))].slice(0, 8);
  const cell = (v) => (v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));
  return section(`Rows (first ${rows.length})`, h('table', { class: 'rows', 'aria-label': 'Dataset rows' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, '#'), keys.map((k) => h('th', { scope: 'col' }, k)))),
    h('tbody', {}, rows.map((r, i) => h('tr', {}, h('td', { class: 'num' }, i), keys.map((k) => h('td', {}, cell(r.val[k]))))))));
}

