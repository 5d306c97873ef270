// Online scorers as the Weave reference stores them: LLM-as-judge
// scorers and monitors are objects, publishing a new version is an edit,
// and a scorer's verdict on a live call is a feedback row of type
// wandb.runnable.<scorer> whose payload.output holds the verdict. The
// monitors page, the calls table and the trace view share these helpers.
import { postJSON } from './api.js';

const RUNNABLE = 'wandb.runnable.';
const MAX_OBJECTS = 500;

export const runnableType = (scorer) => RUNNABLE + scorer;

// scorerOfType is the scorer name of a runnable feedback type, or ''.
export const scorerOfType = (type) => (typeof type === 'string' && type.startsWith(RUNNABLE) ? type.slice(RUNNABLE.length) : '');

// verdictField is the calls query's field of a scorer's verdict: the
// first verdict it gave a call.
export const verdictField = (scorer) => `feedback.[${runnableType(scorer)}].payload.output.verdict`;

export const objectRef = (projectId, name, digest) => `weave:///${projectId}/object/${name}:${digest}`;

// parseRef splits weave:///{entity}/{project}/{kind}/{name}:{digest}; null
// for anything else.
export function parseRef(ref) {
  const m = /^weave:\/\/\/([^/]+)\/([^/]+)\/(object|op)\/([^/:]+)(?::([^/]*))?$/.exec(String(ref || ''));
  return m ? { entity: m[1], project: m[2], kind: m[3], name: m[4], digest: m[5] || '' } : null;
}

// refName shows a ref by its name, an inline object by its name, and
// anything else as it is.
export function refName(ref) {
  if (ref && typeof ref === 'object') return String(ref.name || ref._class_name || '?');
  return (parseRef(ref) || { name: String(ref) }).name;
}

// VERDICT_KINDS are the verdicts an LLM-as-judge scorer the form builds
// may give.
export const VERDICT_KINDS = [
  { id: 'boolean', label: 'true or false' },
  { id: 'number', label: 'a number' },
  { id: 'label', label: 'one of some labels' },
];

// verdictSchema is the JSON schema of a verdict of kind: an object of the
// verdict and its reason. min, max (numbers or null) bound a number;
// labels (strings) list a label's choices.
export function verdictSchema(kind, { min = null, max = null, labels = [] } = {}) {
  let verdict = { type: 'boolean' };
  if (kind === 'number') {
    verdict = { type: 'number' };
    if (min !== null) verdict.minimum = min;
    if (max !== null) verdict.maximum = max;
  } else if (kind === 'label') {
    verdict = { type: 'string', enum: labels };
  }
  return { type: 'object', properties: { verdict, reason: { type: 'string' } }, required: ['verdict', 'reason'], additionalProperties: false };
}

// kindOf reads a scorer's verdict kind back from its schema: '' when the
// scorer is none the form builds.
export function kindOf(scorer) {
  const v = scorer?.model?.default_params?.response_format_schema?.properties?.verdict;
  if (!v) return '';
  if (v.type === 'boolean') return 'boolean';
  if (v.type === 'number') return 'number';
  if (v.type === 'string' && Array.isArray(v.enum)) return 'label';
  return '';
}

// describeVerdict says what a scorer's verdict is in words.
export function describeVerdict(scorer) {
  const v = scorer?.model?.default_params?.response_format_schema?.properties?.verdict || {};
  switch (kindOf(scorer)) {
    case 'boolean': return 'true or false';
    case 'number': {
      const lo = v.minimum ?? '−∞';
      const hi = v.maximum ?? '∞';
      return `a number (${lo} to ${hi})`;
    }
    case 'label': return `one of ${v.enum.join(', ')}`;
    default: return '—';
  }
}

export function scorerVal({ name, model, prompt, schema }) {
  return {
    _type: 'LLMAsAJudgeScorer', _class_name: 'LLMAsAJudgeScorer', _bases: ['Scorer', 'Object', 'BaseModel'],
    name, description: null, column_map: null, scoring_prompt: prompt,
    model: {
      _type: 'LLMStructuredCompletionModel', _class_name: 'LLMStructuredCompletionModel', _bases: ['BaseObject', 'BaseModel'],
      name: null, description: null, llm_model_id: model,
      default_params: { messages_template: [], temperature: 0, response_format: 'json', response_format_schema: schema },
    },
  };
}

export function monitorVal({ name, description, samplingRate, scorers, opNames, query, active, cap }) {
  return {
    _type: 'Monitor', _class_name: 'Monitor', _bases: ['Object', 'BaseModel'],
    name, description: description || null, sampling_rate: samplingRate, scorers, op_names: opNames,
    query: query || null, active, daily_spend_cap_usd: cap ?? null,
  };
}

// latest reads the latest version of every object of a base class, by
// name, with its value and ref.
export async function latest(projectId, baseClass) {
  const r = await postJSON('/objs/query', { project_id: projectId,
    filter: { base_object_classes: [baseClass], latest_only: true }, limit: MAX_OBJECTS,
    sort_by: [{ field: 'object_id', direction: 'asc' }] });
  return (r.objs || []).map((o) => ({ name: o.object_id, digest: o.digest, version: o.version_index, createdAt: o.created_at,
    ref: objectRef(projectId, o.object_id, o.digest), val: o.val || {} }));
}

// publish stores val as the next version of object name and answers its
// ref.
export async function publish(projectId, name, val) {
  const r = await postJSON('/obj/create', { obj: { project_id: projectId, object_id: name, val } });
  return objectRef(projectId, name, r.digest);
}

// remove deletes every version of object name.
export const remove = (projectId, name) => postJSON('/obj/delete', { project_id: projectId, object_id: name });

// monitorStatus asks the runner how each monitor fares; null when it
// cannot say (no runner, or it failed), so the page shows the rest.
export async function monitorStatus(projectId) {
  try {
    const r = await postJSON('/monitors/status', { project_id: projectId });
    return Array.isArray(r.monitors) ? r.monitors : null;
  } catch {
    return null;
  }
}

// scorersWithVerdicts lists the project's scorers that have given at
// least one verdict: each name, and the labels a label verdict takes.
export async function scorersWithVerdicts(projectId) {
  const scorers = await latest(projectId, 'Scorer');
  const given = await Promise.all(scorers.map(async (s) => {
    const r = await postJSON('/feedback/query', { project_id: projectId, fields: ['id'], limit: 1,
      query: { $expr: { $eq: [{ $getField: 'feedback_type' }, { $literal: runnableType(s.name) }] } } });
    return (r.result || []).length > 0;
  }));
  return scorers.filter((_, i) => given[i]).map((s) => ({ name: s.name,
    labels: kindOf(s.val) === 'label' ? s.val.model.default_params.response_format_schema.properties.verdict.enum : [] }));
}

// verdictOf reads a runnable feedback row: its verdict and reason (the
// payload's output when it is no object).
export function verdictOf(f) {
  const out = f?.payload?.output;
  if (out !== null && typeof out === 'object' && !Array.isArray(out)) return { verdict: out.verdict, reason: out.reason ?? '' };
  return { verdict: out, reason: '' };
}

export function fmtVerdict(v) {
  if (v === undefined || v === null) return '—';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

// callVerdict is the verdict a scorer first gave a call read with
// include_feedback (the one the calls query filters on), or undefined.
export function callVerdict(call, scorer) {
  const rows = call?.summary?.weave?.feedback || [];
  const f = rows.find((r) => r.feedback_type === runnableType(scorer));
  return f ? verdictOf(f) : undefined;
}
