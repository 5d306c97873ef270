// Collapsible JSON: objects and arrays are <details> elements, so they
// open and close with the keyboard as well as the mouse. Strings holding
// weave:/// refs become links to the object, call or table they name.
import { h } from './dom.js';
import { projectPath } from './paths.js';

const OPEN_DEPTH = 2;
const MAX_CHILDREN = 500;

// refLink maps weave:///{entity}/{project}/{kind}/{name}:{digest} to its
// UI address, a same-origin path, or null for anything else (a ref whose
// entity or project is no valid name among them).
export function refLink(ref) {
  const m = /^weave:\/\/\/([^/]+)\/([^/]+)\/(object|op|call|table)\/([^/:]+)(?::([^/]+))?/.exec(ref);
  if (!m) return null;
  const [, e, p, kind, name, digest] = m;
  if (kind === 'call') return projectPath(e, p, 'calls', name);
  if (kind === 'object' || kind === 'op') return digest ? projectPath(e, p, 'objects', name, digest) : projectPath(e, p, 'objects', name);
  return null;
}

function scalar(v) {
  if (typeof v === 'string') {
    const link = refLink(v);
    if (link) return h('a', { href: link, class: 'ref' }, v);
    return h('span', { class: 'j-str' }, JSON.stringify(v));
  }
  return h('span', { class: v === null ? 'j-null' : 'j-' + typeof v }, JSON.stringify(v));
}

function node(key, v, depth) {
  const label = key === null ? null : h('span', { class: 'j-key' }, key + ': ');
  if (v === null || typeof v !== 'object') return h('div', { class: 'j-row' }, label, scalar(v));
  const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v);
  const brief = Array.isArray(v) ? `[${entries.length}]` : `{${entries.length}}`;
  const kids = entries.slice(0, MAX_CHILDREN).map(([k, x]) => node(k, x, depth + 1));
  if (entries.length > MAX_CHILDREN) kids.push(h('div', { class: 'j-more' }, `… ${entries.length - MAX_CHILDREN} more`));
  return h('details', { class: 'j-node', open: depth < OPEN_DEPTH },
    h('summary', {}, label, h('span', { class: 'j-brief' }, brief)), h('div', { class: 'j-kids' }, kids));
}

// jsonView renders a value, top level open.
export function jsonView(v) {
  return h('div', { class: 'json' }, node(null, v, 0));
}

// section is a collapsible titled block holding a JSON value.
export function section(title, v, open = true) {
  return h('details', { class: 'section', open },
    h('summary', {}, h('h3', {}, title)), v instanceof Node ? v : jsonView(v));
}
