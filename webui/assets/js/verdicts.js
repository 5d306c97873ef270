// A call's runnable verdicts in the trace view: what each online scorer
// judged of the call, with the reason it gave and the monitor that ran
// it, beside the human feedback.
import { h, fmtTime } from './dom.js';
import { projectPath } from './paths.js';
import { scorerOfType, verdictOf, fmtVerdict, parseRef } from './monitorsapi.js';

// isVerdict tells a scorer's verdict from human feedback.
export const isVerdict = (f) => scorerOfType(f && f.feedback_type) !== '';

// verdictsSection is the Verdicts block of a call read with
// include_feedback, or null when no scorer judged it.
export function verdictsSection(call, ctx) {
  const rows = ((call.summary && call.summary.weave && call.summary.weave.feedback) || []).filter(isVerdict);
  if (!rows.length) return null;
  const table = h('table', { class: 'verdicts', 'aria-label': 'Verdicts of online scorers' },
    h('thead', {}, h('tr', {}, ['Scorer', 'Verdict', 'Reason', 'Monitor', 'At'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows.map((f) => {
      const { verdict, reason } = verdictOf(f);
      const trigger = parseRef(f.trigger_ref);
      const monitors = trigger && projectPath(ctx.entity, ctx.project, 'monitors');
      return h('tr', { 'data-scorer': scorerOfType(f.feedback_type) },
        h('td', {}, scorerOfType(f.feedback_type)),
        h('td', { class: 'verdict', 'data-verdict': fmtVerdict(verdict) }, fmtVerdict(verdict)),
        h('td', { class: 'reason' }, typeof reason === 'string' ? reason : JSON.stringify(reason)),
        h('td', {}, monitors ? h('a', { href: `${monitors}?monitor=${encodeURIComponent(trigger.name)}` }, trigger.name) : '—'),
        h('td', {}, fmtTime(f.created_at)));
    })));
  return h('details', { class: 'section', open: true }, h('summary', {}, h('h3', {}, 'Verdicts')), table);
}
