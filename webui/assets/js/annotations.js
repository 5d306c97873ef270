// Human annotations: the project's annotation specs (Weave objects of
// base class AnnotationSpec), an input per spec chosen by its JSON
// schema, and saving a value as feedback of type
// wandb.annotation.<spec name> that points at the spec's ref.
import { postJSON } from './api.js';
import { h } from './dom.js';

const MAX_SPECS = 100;

// Spec is one annotation spec: name, description, schema and its ref.
function spec(projectId, o) {
  const v = o.val || {};
  return { name: o.object_id, description: v.description || '', schema: v.field_schema || {},
    ref: `weave:///${projectId}/object/${o.object_id}:${o.digest}` };
}

// listSpecs reads the latest version of every annotation spec of the
// project.
export async function listSpecs(projectId) {
  const r = await postJSON('/objs/query', { project_id: projectId,
    filter: { base_object_classes: ['AnnotationSpec'], latest_only: true }, limit: MAX_SPECS,
    sort_by: [{ field: 'object_id', direction: 'asc' }] });
  return (r.objs || []).map((o) => spec(projectId, o));
}

// readSpecs reads the specs the refs name (a queue's scorer_refs);
// refs of other objects are left out.
export async function readSpecs(projectId, refs) {
  if (!refs.length) return [];
  const r = await postJSON('/refs/read_batch', { refs });
  const out = [];
  refs.forEach((ref, i) => {
    const v = (r.vals || [])[i];
    const m = /\/object\/([^/:]+):([^/]+)$/.exec(ref);
    if (v && m && v.field_schema) out.push(spec(projectId, { object_id: m[1], digest: m[2], val: v }));
  });
  return out;
}

// specField is a labelled input for one spec; value() reads what was
// entered, undefined when nothing was.
export function specField(s, idPrefix) {
  const id = `${idPrefix}-${s.name}`;
  const sc = s.schema;
  let input;
  let value;
  if (sc.type === 'boolean') {
    input = h('select', { id, 'data-spec': s.name }, h('option', { value: '' }, '—'),
      h('option', { value: 'true' }, 'Yes'), h('option', { value: 'false' }, 'No'));
    value = () => (input.value === '' ? undefined : input.value === 'true');
  } else if (Array.isArray(sc.enum)) {
    input = h('select', { id, 'data-spec': s.name }, h('option', { value: '' }, '—'),
      sc.enum.map((o, i) => h('option', { value: String(i) }, String(o))));
    value = () => (input.value === '' ? undefined : sc.enum[Number(input.value)]);
  } else if (sc.type === 'number' || sc.type === 'integer') {
    input = h('input', { id, type: 'number', 'data-spec': s.name, min: sc.minimum, max: sc.maximum,
      step: sc.type === 'integer' ? 1 : 'any' });
    value = () => (input.value === '' ? undefined : Number(input.value));
  } else {
    input = h('input', { id, type: 'text', 'data-spec': s.name, maxlength: sc.maxLength });
    value = () => (input.value === '' ? undefined : input.value);
  }
  const range = sc.minimum !== undefined || sc.maximum !== undefined ? ` (${sc.minimum ?? ''}–${sc.maximum ?? ''})` : '';
  const el = h('div', { class: 'spec' }, h('label', { for: id }, s.name + range),
    input, s.description ? h('span', { class: 'hint' }, ' ' + s.description) : null);
  return { el, input, spec: s, value, valid: () => input.checkValidity() };
}

// saveAnnotation stores value as the caller's annotation of the call.
export function saveAnnotation(projectId, callId, s, value, queueId) {
  return postJSON('/feedback/create', { project_id: projectId, weave_ref: `weave:///${projectId}/call/${callId}`,
    feedback_type: `wandb.annotation.${s.name}`, annotation_ref: s.ref, payload: { value },
    queue_id: queueId || undefined });
}

// specsForm is a form of one input per spec whose submit saves the
// values entered; onSaved runs after.
export function specsForm(projectId, callId, specs, onSaved, status) {
  const fields = specs.map((s) => specField(s, 'ann'));
  const form = h('form', { class: 'annotations', 'aria-label': 'Annotations', novalidate: true }, fields.map((f) => f.el),
    h('button', { type: 'submit' }, 'Save annotations'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const filled = fields.filter((f) => f.value() !== undefined);
    if (!filled.length || fields.some((f) => !f.valid())) {
      status('Enter a valid value first');
      return;
    }
    try {
      for (const f of filled) await saveAnnotation(projectId, callId, f.spec, f.value());
      status(`Saved ${filled.length} annotation${filled.length === 1 ? '' : 's'}`);
      onSaved();
    } catch (err) {
      status(String(err.message || err));
    }
  });
  return form;
}
