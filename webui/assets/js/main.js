// Entry point: routes each address to its page. Every page has its own
// address; one opened signed out shows the sign-in form, then the page.
import { getKey, clearKey, whoAmI, ApiError } from './api.js';
import { h, setStatus } from './dom.js';
import { renderSignIn, renderPicker, recentProjects, rememberProject } from './signin.js';
import { initTheme } from './theme.js';

const pages = {
  calls: () => import('./calls.js'),
  trace: () => import('./trace.js'),
  charts: () => import('./charts.js'),
  threads: () => import('./threads.js'),
  objects: () => import('./objects.js'),
  datasets: () => import('./objects.js'),
  automations: () => import('./automations.js'),
  alerts: () => import('./alerts.js'),
  training: () => import('./training.js'),
  models: () => import('./models.js'),
  playground: () => import('./playground.js'),
  queues: () => import('./queues.js'),
  evaluations: () => import('./evaluations.js'),
  monitors: () => import('./monitors.js'),
};

// NAV are the project pages the header links to, in order.
const NAV = ['calls', 'charts', 'threads', 'objects', 'datasets', 'evaluations', 'training', 'models', 'playground', 'monitors', 'automations', 'alerts', 'queues'];

let current = null; // the page shown, so it can stop its timers

export function navigate(path) {
  history.pushState(null, '', path);
  route();
}

// parse splits /{entity}/{project}/{page}[/{id}[/{digest}]].
export function parse(pathname) {
  const segs = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (segs.length < 3) return null;
  const [entity, project, page, id, sub] = segs;
  return { entity, project, page: page === 'calls' && id ? 'trace' : page, section: page, id, sub };
}

async function route() {
  if (current && current.stop) current.stop();
  current = null;
  const main = document.getElementById('main');
  setStatus('');
  if (!getKey()) {
    document.getElementById('signout').hidden = true;
    return renderSignIn(main, route);
  }
  document.getElementById('signout').hidden = false;
  const where = parse(location.pathname);
  if (!where || !pages[where.page]) return home(main);
  rememberProject(where.entity, where.project);
  renderNav(where);
  main.replaceChildren(h('p', {}, 'Loading…'));
  try {
    const mod = await pages[where.page]();
    current = await mod.render(main, { ...where, params: new URLSearchParams(location.search), navigate });
  } catch (err) {
    failed(main, err);
  }
}

function failed(main, err) {
  if (err instanceof ApiError && err.status === 401) {
    clearKey();
    return route();
  }
  main.replaceChildren(h('p', { class: 'error', role: 'alert' }, String(err.message || err)));
}

async function home(main) {
  document.getElementById('nav').replaceChildren();
  try {
    const me = await whoAmI();
    renderPicker(main, me, navigate);
  } catch (err) {
    failed(main, err);
  }
}

function renderNav(where) {
  const base = `/${encodeURIComponent(where.entity)}/${encodeURIComponent(where.project)}`;
  const links = NAV.map((p) =>
    h('a', { href: `${base}/${p}`, 'aria-current': where.section === p ? 'page' : null }, p[0].toUpperCase() + p.slice(1)));
  document.getElementById('nav').replaceChildren(h('span', { class: 'project' }, `${where.entity}/${where.project}`), ...links);
  const list = h('datalist', { id: 'recent' }, recentProjects().map((p) => h('option', { value: p })));
  document.getElementById('picker').replaceChildren(list);
}

// Same-origin links change the page without reloading it.
document.addEventListener('click', (ev) => {
  const a = ev.target.closest('a');
  if (!a || a.origin !== location.origin || a.target || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
  ev.preventDefault();
  navigate(a.pathname + a.search);
});
window.addEventListener('popstate', route);
document.getElementById('signout').addEventListener('click', () => {
  clearKey();
  navigate('/');
});
initTheme(document.getElementById('theme'));
route();
