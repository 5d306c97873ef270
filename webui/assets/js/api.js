// Client of weft's own API. The key is sent only with relative,
// same-origin requests: post refuses any other address.
const KEY = 'weft.apiKey';

export const getKey = () => localStorage.getItem(KEY) || '';
export const setKey = (k) => localStorage.setItem(KEY, k);
export const clearKey = () => localStorage.removeItem(KEY);

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function sameOrigin(path) {
  return path.startsWith('/') && !path.startsWith('//') && !path.includes('\\');
}

// open is the one function that sends the key: only to a same-origin
// path, as Basic auth, never with cookies. It answers the response of a
// 2xx status and throws ApiError for any other.
async function open(method, path, body, signal, extra = {}) {
  if (!sameOrigin(path)) throw new Error('refusing to send the key to ' + path);
  const headers = { ...extra, Authorization: 'Basic ' + btoa('api:' + getKey()) };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, {
    method, credentials: 'omit', cache: 'no-store', signal, headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) {
    const text = await res.text();
    throw new ApiError(res.status, reason(text) || res.statusText);
  }
  return res;
}

async function send(method, path, body, signal, extra) {
  return (await open(method, path, body, signal, extra)).text();
}

const post = (path, body, signal) => send('POST', path, body, signal);

function reason(text) {
  try {
    const v = JSON.parse(text);
    if (Array.isArray(v.detail)) return v.detail.map((d) => `${(d.loc || []).join('.')}: ${d.msg}`).join('; ');
    return v.reason || v.detail || v.message || text;
  } catch {
    return text;
  }
}

export async function postJSON(path, body, signal) {
  return JSON.parse(await post(path, body, signal));
}

// getJSON reads a GET endpoint (the training API); query holds its
// parameters, empty ones left out, and headers any extra request headers
// (the gateway's Service-Project).
export async function getJSON(path, query = {}, signal, headers) {
  const q = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== null && v !== ''));
  const qs = q.toString();
  return JSON.parse(await send('GET', path + (qs ? '?' + qs : ''), undefined, signal, headers));
}

// streamLines posts body and calls onLine with each JSON line of the
// answer as it arrives (the completions stream), so output can be shown
// before the answer ends.
export async function streamLines(path, body, onLine, signal) {
  const res = await open('POST', path, body, signal);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let rest = '';
  const emit = (line) => { if (line.trim() !== '') onLine(JSON.parse(line)); };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const lines = (rest + value).split('\n');
    rest = lines.pop();
    lines.forEach(emit);
  }
  emit(rest);
}

// postLines reads a JSON-lines answer (the stream_query endpoints).
export async function postLines(path, body, signal) {
  const text = await post(path, body, signal);
  return text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
}

// whoAmI asks the GraphQL endpoint which entity the key belongs to; a
// refused key throws ApiError 401.
export async function whoAmI() {
  const r = await postJSON('/graphql', { query: '{ viewer { username entity defaultEntity { name } } }' });
  if (!r.data || !r.data.viewer) throw new ApiError(401, 'the key was not accepted');
  const v = r.data.viewer;
  return { user: v.username, entity: (v.defaultEntity && v.defaultEntity.name) || v.entity };
}
