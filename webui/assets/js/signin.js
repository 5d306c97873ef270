// Sign-in with an API key, and the entity and project picker.
import { setKey, clearKey, whoAmI, postJSON } from './api.js';
import { h, fmtTime } from './dom.js';
import { projectIDPath } from './paths.js';

const RECENT = 'weft.recentProjects';

export function recentProjects() {
  try {
    return JSON.parse(localStorage.getItem(RECENT) || '[]');
  } catch {
    return [];
  }
}

export function rememberProject(entity, project) {
  const id = `${entity}/${project}`;
  const list = [id, ...recentProjects().filter((p) => p !== id)].slice(0, 10);
  localStorage.setItem(RECENT, JSON.stringify(list));
}

// renderSignIn asks for the key; once weft accepts it, done re-renders the
// address the user opened.
export function renderSignIn(main, done) {
  const error = h('p', { class: 'error', role: 'alert' });
  const input = h('input', { id: 'apikey', name: 'apikey', type: 'password', autocomplete: 'current-password', required: true });
  const form = h('form', { class: 'card signin', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'Sign in to Weft'),
    h('label', { for: 'apikey' }, 'API key'), input,
    h('p', { class: 'hint' }, 'The key weft printed on first start, or one from `weft keys create`. It stays in this browser and is sent only to this server.'),
    h('button', { type: 'submit' }, 'Sign in'), error);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    setKey(input.value.trim());
    try {
      await whoAmI();
      done();
    } catch (err) {
      clearKey();
      error.textContent = err.status === 401 ? 'Weft did not accept this key.' : String(err.message);
    }
  });
  main.replaceChildren(form);
  input.focus();
}

// renderPicker opens a project: the projects of the key's entity that
// hold calls, objects, tables or feedback, or any project typed in (every project of an entity the key
// may read exists, even before its first call).
export function renderPicker(main, me, navigate) {
  const recent = recentProjects();
  const entity = h('input', { id: 'entity', name: 'entity', value: me.entity || '', required: true });
  const project = h('input', { id: 'project', name: 'project', list: 'recent-names', required: true, value: recent.length ? recent[0].split('/')[1] : '' });
  const listed = h('section', { class: 'card', 'aria-labelledby': 'projects-title', 'aria-busy': 'true' },
    h('h2', { id: 'projects-title' }, 'Projects'), h('p', {}, 'Loading…'));
  const form = h('form', { class: 'card picker', 'aria-labelledby': 'picker-title' },
    h('h1', { id: 'picker-title' }, 'Open a project'),
    h('p', {}, `Signed in${me.user ? ' as ' + me.user : ''}; this key reads the projects of ${me.entity}.`),
    h('label', { for: 'entity' }, 'Entity'), entity,
    h('label', { for: 'project' }, 'Project'), project,
    h('datalist', { id: 'recent-names' }, recent.filter((p) => p.startsWith(entity.value + '/')).map((p) => h('option', { value: p.split('/')[1] }))),
    h('button', { type: 'submit' }, 'Open'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    navigate(`/${encodeURIComponent(entity.value.trim())}/${encodeURIComponent(project.value.trim())}/calls`);
  });
  entity.addEventListener('change', () => listProjects(listed, entity.value.trim()));
  main.replaceChildren(form, listed);
  listProjects(listed, entity.value.trim());
  project.focus();
}

async function listProjects(section, entity) {
  const title = section.firstChild;
  try {
    const { projects } = await postJSON('/projects/list', { entity });
    const items = projects.map((p) => {
      const href = projectIDPath(p.project_id, p.call_count ? 'calls' : 'objects');
      return h('li', {}, href ? h('a', { href }, p.project_id) : h('span', {}, p.project_id),
        h('span', { class: 'hint' }, ` ${holds(p)}, last active ${fmtTime(p.last_activity_at)}`));
    });
    section.replaceChildren(title, items.length ? h('ul', { class: 'projects' }, items) : h('p', {}, `No project of ${entity} holds data yet.`));
  } catch (err) {
    section.replaceChildren(title, h('p', { class: 'error' }, String(err.message)));
  }
  section.removeAttribute('aria-busy');
}

// holds says what a listed project holds, e.g. "3 calls, 2 objects".
function holds(p) {
  const parts = [[p.call_count, 'call'], [p.object_count, 'object'], [p.table_count, 'table'], [p.feedback_count, 'feedback']]
    .filter(([n]) => n > 0).map(([n, what]) => `${n.toLocaleString()} ${what}${n === 1 || what === 'feedback' ? '' : 's'}`);
  return parts.join(', ');
}
