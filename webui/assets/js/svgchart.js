// A small SVG chart: bars or lines over time buckets, with axes labels
// and an accessible description of what it shows.
import { h, s } from './dom.js';

const W = 640;
const H = 180;
const PAD = { l: 56, r: 8, t: 8, b: 22 };

function ticks(max) {
  return [0, max / 2, max];
}

// chart renders series ({name, values, kind, cls}) over bucket start times.
export function chart(id, title, times, series, fmt, total) {
  const max = Math.max(1e-9, ...series.flatMap((sr) => sr.values.filter((v) => v !== null)));
  const x = (i) => PAD.l + (i * (W - PAD.l - PAD.r)) / Math.max(1, times.length);
  const y = (v) => H - PAD.b - (v / max) * (H - PAD.t - PAD.b);
  const bw = Math.max(1, (W - PAD.l - PAD.r) / Math.max(1, times.length) - 1);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': `${id}-title` });
  for (const t of ticks(max)) {
    svg.append(s('line', { x1: PAD.l, x2: W - PAD.r, y1: y(t), y2: y(t), class: 'grid' }),
      s('text', { x: PAD.l - 4, y: y(t) + 4, class: 'tick', 'text-anchor': 'end' }, fmt(t)));
  }
  [[0, 'start'], [Math.floor(times.length / 2), 'middle'], [times.length - 1, 'end']].forEach(([i, anchor]) => {
    if (times[i]) svg.append(s('text', { x: x(i) + (anchor === 'end' ? bw : 0), y: H - 6, class: 'tick', 'text-anchor': anchor }, shortTime(times[i], times)));
  });
  for (const sr of series) {
    if (sr.kind === 'bar') {
      sr.values.forEach((v, i) => {
        if (v) svg.append(s('rect', { x: x(i), y: y(v), width: bw, height: H - PAD.b - y(v), class: sr.cls }));
      });
    } else {
      const pts = sr.values.map((v, i) => (v === null ? null : `${x(i) + bw / 2},${y(v)}`)).filter(Boolean);
      if (pts.length) svg.append(s('polyline', { points: pts.join(' '), class: `line ${sr.cls}` }));
      // Dots, so a lone value (one busy bucket) shows too.
      sr.values.forEach((v, i) => {
        if (v !== null) svg.append(s('circle', { cx: x(i) + bw / 2, cy: y(v), r: 2.5, class: `dot ${sr.cls}` }));
      });
    }
  }
  const legend = series.length > 1 ? h('ul', { class: 'legend' }, series.map((sr) => h('li', { class: sr.cls }, sr.name))) : null;
  return h('figure', { class: 'chart', id, 'data-total': total },
    h('figcaption', { id: `${id}-title` }, `${title}: ${fmt(total)}`), svg, legend);
}

function shortTime(iso, times) {
  const d = new Date(iso);
  const spanMs = Date.parse(times[times.length - 1]) - Date.parse(times[0]);
  return spanMs > 2 * 86400000 ? d.toLocaleDateString() : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}
