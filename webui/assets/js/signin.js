// Sign-in with an API key, and the entity and project picker.
import { setKey, clearKey, whoAmI } from './api.js';
import { h } from './dom.js';

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

// renderPicker opens a project: the key's entity and the projects opened
// before in this browser are offered.
export function renderPicker(main, me, navigate) {
  const recent = recentProjects();
  const entity = h('input', { id: 'entity', name: 'entity', value: me.entity || '', required: true });
  const project = h('input', { id: 'project', name: 'project', list: 'recent-names', required: true, value: recent.length ? recent[0].split('/')[1] : '' });
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
  const links = recent.map((p) => h('li', {}, h('a', { href: `/${p}/calls` }, p)));
  main.replaceChildren(form, recent.length ? h('section', { class: 'card' }, h('h2', {}, 'Recent projects'), h('ul', {}, links)) : '');
  project.focus();
}
