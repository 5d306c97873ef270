// An alert's condition in words and its values in the metric's unit, so
// the list reads "error rate of chat > 5 % over 5 min" rather than JSON.
import { fmtMs } from './dom.js';

// METRICS are the metrics a condition may watch (automations.Condition),
// with their names in words and what a threshold is measured in.
export const METRICS = [
  { id: 'error_rate', label: 'error rate', unit: 'a fraction of the calls: 0.05 is 5 %' },
  { id: 'error_count', label: 'errors', unit: 'calls that raised' },
  { id: 'call_count', label: 'calls', unit: 'calls' },
  { id: 'latency_p50_ms', label: 'latency p50', unit: 'milliseconds' },
  { id: 'latency_p95_ms', label: 'latency p95', unit: 'milliseconds' },
  { id: 'latency_p99_ms', label: 'latency p99', unit: 'milliseconds' },
  { id: 'total_tokens', label: 'tokens', unit: 'tokens' },
  { id: 'cost', label: 'cost', unit: 'US dollars' },
];

export const COMPARATORS = ['>', '>=', '<', '<='];

export const metricOf = (id) => METRICS.find((m) => m.id === id) || { id, label: id, unit: '' };

// fmtValue shows a measured value or a threshold in the metric's unit.
export function fmtValue(metric, v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '—';
  switch (metric) {
    case 'error_rate': return `${+(v * 100).toPrecision(3)} %`;
    case 'latency_p50_ms': case 'latency_p95_ms': case 'latency_p99_ms': return fmtMs(v);
    case 'cost': return v === 0 ? '$0' : `$${v.toFixed(v < 0.01 ? 5 : 2)}`;
    default: return Math.round(v).toLocaleString();
  }
}

// fmtWindow shows a window of seconds in the largest whole unit.
export function fmtWindow(seconds) {
  for (const [n, unit] of [[86400, 'day'], [3600, 'h'], [60, 'min']]) {
    if (seconds >= n && seconds % n === 0) {
      const k = seconds / n;
      return unit === 'day' ? `${k} day${k === 1 ? '' : 's'}` : `${k} ${unit}`;
    }
  }
  return `${seconds} s`;
}

// describe is a condition in words.
export function describe(c) {
  if (!c) return '—';
  const ops = c.op_names && c.op_names.length ? ` of ${c.op_names.join(', ')}` : '';
  const filtered = c.filter || c.query ? ' (filtered calls)' : '';
  let text = `${metricOf(c.metric).label}${ops}${filtered} ${c.comparator} ${fmtValue(c.metric, c.threshold)} over ${fmtWindow(c.window_seconds)}`;
  if (c.min_calls) text += `, with at least ${c.min_calls.toLocaleString()} calls`;
  if (c.enforce) text += '; enforced: inference is refused while it fires';
  return text;
}
