// Token and cost totals of a call, from summary.usage and the
// summary.weave.costs that include_costs adds.

const n = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export function modelUsage(call) {
  const usage = (call.summary && call.summary.usage) || {};
  const costs = (call.summary && call.summary.weave && call.summary.weave.costs) || {};
  return Object.keys({ ...usage, ...costs }).sort().map((model) => {
    const u = usage[model] || {};
    const c = costs[model] || {};
    const prompt = n(u.prompt_tokens) + n(u.input_tokens);
    const completion = n(u.completion_tokens) + n(u.output_tokens);
    return {
      model, requests: n(u.requests), prompt, completion,
      total: n(u.total_tokens) || prompt + completion,
      // Cached input is billed apart, as the store's cost sort counts it.
      cost: n(c.prompt_tokens_total_cost) + n(c.completion_tokens_total_cost)
        + n(c.cache_read_input_tokens_total_cost) + n(c.cache_creation_input_tokens_total_cost),
    };
  });
}

export function totals(call) {
  return modelUsage(call).reduce((t, m) => ({ tokens: t.tokens + m.total, cost: t.cost + m.cost }), { tokens: 0, cost: 0 });
}

export function status(call) {
  const w = call.summary && call.summary.weave;
  if (w && w.status) return w.status;
  if (call.exception) return 'error';
  return call.ended_at ? 'success' : 'running';
}

export function latency(call) {
  const w = call.summary && call.summary.weave;
  if (w && typeof w.latency_ms === 'number') return w.latency_ms;
  return call.ended_at ? Date.parse(call.ended_at) - Date.parse(call.started_at) : null;
}
