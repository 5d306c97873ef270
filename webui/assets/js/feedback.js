// A call's human feedback in the trace view (scorers' verdicts show
// apart, verdicts.js): what was given, reactions and notes to add, the
// caller's own to remove, and the project's annotation specs to fill.
import { postJSON, whoAmI } from './api.js';
import { h, fmtTime } from './dom.js';
import { listSpecs, specsForm } from './annotations.js';
import { isVerdict } from './verdicts.js';

const REACTIONS = ['👍', '👎', '🎉', '😕', '❤️', '👀'];
const MAX_FEEDBACK = 1000;
const MAX_NOTE = 1024; // the server's limit on a note's characters

// feedbackSection is the Feedback block of a call, loading what it
// shows on its own.
export function feedbackSection(projectId, call) {
  const body = h('div', { class: 'feedback-body' });
  const status = h('p', { class: 'hint', role: 'status', 'aria-live': 'polite' });
  const say = (t) => { status.textContent = t; };
  const ref = `weave:///${projectId}/call/${call.id}`;
  let me = null;
  const list = h('ul', { class: 'feedback' });
  const reload = async () => {
    const r = await postJSON('/feedback/query', { project_id: projectId,
      query: { $expr: { $eq: [{ $getField: 'weave_ref' }, { $literal: ref }] } },
      sort_by: [{ field: 'created_at', direction: 'asc' }], limit: MAX_FEEDBACK });
    list.replaceChildren(...(r.result || []).filter((f) => !isVerdict(f)).map((f) => item(f, me, remove)));
  };
  const act = (fn, done) => async (...args) => {
    try {
      await fn(...args);
      say(done);
      await reload();
    } catch (err) {
      say(String(err.message || err));
    }
  };
  const create = (type, payload) => postJSON('/feedback/create', { project_id: projectId, weave_ref: ref, feedback_type: type, payload });
  const remove = act((id) => postJSON('/feedback/purge', { project_id: projectId,
    query: { $expr: { $eq: [{ $getField: 'id' }, { $literal: id }] } } }), 'Feedback removed');
  const react = act((e) => create('wandb.reaction.1', { emoji: e }), 'Reaction added');
  const note = h('textarea', { id: 'note', rows: 2, maxlength: MAX_NOTE, required: true });
  const addNote = act(async () => {
    await create('wandb.note.1', { note: note.value });
    note.value = '';
  }, 'Note added');
  const noteForm = h('form', { class: 'note-form' }, h('label', { for: 'note' }, 'Note'), note, h('button', { type: 'submit' }, 'Add note'));
  noteForm.addEventListener('submit', (ev) => { ev.preventDefault(); if (note.value.trim()) addNote(); });
  const reactions = h('div', { class: 'reactions', role: 'group', 'aria-label': 'React' },
    REACTIONS.map((e) => h('button', { type: 'button', class: 'react', 'aria-label': `React ${e}`, 'data-emoji': e, onclick: () => react(e) }, e)));
  // What the call was read with shows at once; the query refreshes it.
  const given = (call.summary && call.summary.weave && call.summary.weave.feedback) || [];
  list.append(...given.filter((f) => !isVerdict(f)).map((f) => item(f, null, remove)));
  body.append(list, reactions, noteForm, status);
  (async () => {
    try {
      me = (await whoAmI()).user;
    } catch { /* without a user, nothing is shown as removable */ }
    const specs = await listSpecs(projectId).catch(() => []);
    if (specs.length) body.insertBefore(h('div', {}, h('h4', {}, 'Annotations'), specsForm(projectId, call.id, specs, reload, say)), status);
    await reload();
    body.dataset.loaded = 'true';
  })().catch((err) => say(String(err.message || err)));
  return h('details', { class: 'section', open: true }, h('summary', {}, h('h3', {}, 'Feedback')), body);
}

// item is one piece of feedback; the caller's own has a remove button.
function item(f, me, remove) {
  const p = f.payload ?? {};
  let what = JSON.stringify(p);
  if (f.feedback_type === 'wandb.reaction.1') what = p.emoji;
  else if (f.feedback_type === 'wandb.note.1') what = p.note;
  else if ((f.feedback_type || '').startsWith('wandb.annotation.')) what = JSON.stringify(p.value);
  const mine = me && f.wb_user_id === me;
  return h('li', { 'data-feedback-id': f.id, 'data-type': f.feedback_type },
    h('strong', {}, f.feedback_type || 'feedback'), ': ', h('span', { class: 'what' }, what),
    h('span', { class: 'hint' }, ` ${f.wb_user_id ? 'by ' + f.wb_user_id + ' ' : ''}(${fmtTime(f.created_at)})`),
    mine ? h('button', { type: 'button', class: 'remove', 'aria-label': `Remove ${f.feedback_type} ${what}`, onclick: () => remove(f.id) }, 'Remove') : null);
}
