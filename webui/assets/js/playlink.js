// The link from an LLM call to the playground: shown for calls whose
// inputs hold chat messages and a model (OpenAI chat calls, the gateway's
// own traced calls), which the playground can run again.
import { h } from './dom.js';

export function isChatCall(call) {
  const inputs = call && call.inputs;
  return !!inputs && Array.isArray(inputs.messages) && typeof inputs.model === 'string' && inputs.model !== '';
}

export function playgroundLink(call, base) {
  if (!isChatCall(call)) return null;
  return h('a', { class: 'playground-link', href: `${base}/playground?call=${encodeURIComponent(call.id)}` }, 'Open in playground');
}
