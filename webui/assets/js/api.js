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

async function post(path, body, signal) {
  if (!sameOrigin(path)) throw new Error('refusing to send the key to ' + path);
  const res = await fetch(path, {
    method: 'POST', credentials: 'omit', cache: 'no-store', signal,
    headers: { Authorization: 'Basic ' + btoa('api:' + getKey()), 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new ApiError(res.status, reason(text) || res.statusText);
  return text;
}

function reason(text) {
  try {
    const v = JSON.parse(text);
    return v.reason || v.detail || v.message || text;
  } catch {
    return text;
  }
}

export async function postJSON(path, body, signal) {
  return JSON.parse(await post(path, body, signal));
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
