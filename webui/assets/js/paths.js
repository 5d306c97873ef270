// Addresses of the UI's own pages, built only from checked parts: a
// value from call data or the API never becomes a link that leaves
// weft's origin (a "/\evil.example" path is another site to a browser).

// NAME is an entity or project name as the server accepts it
// (auth.ValidName): letters, digits, '-', '_' and '.', never '.' alone
// or with '..'.
const NAME = /^(?!.*\.\.)(?!\.$)[A-Za-z0-9._-]+$/;

export const validName = (s) => typeof s === 'string' && NAME.test(s);

// projectPath is /{entity}/{project}/{parts...} with every part
// percent-encoded, or null when entity or project is no valid name or a
// part is empty, '.' or '..'. The result always starts with one '/' and
// a valid name, so it stays on this origin.
export function projectPath(entity, project, ...parts) {
  if (!validName(entity) || !validName(project)) return null;
  if (parts.some((p) => typeof p !== 'string' || p === '' || p === '.' || p === '..')) return null;
  return '/' + [entity, project, ...parts].map(encodeURIComponent).join('/');
}

// projectIDPath is projectPath for an "entity/project" id.
export function projectIDPath(projectID, ...parts) {
  const [entity, project, ...rest] = String(projectID).split('/');
  return rest.length ? null : projectPath(entity, project, ...parts);
}
