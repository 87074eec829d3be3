// A small SVG bar chart built with createElementNS (no library, no inline style:
// the bars take their colours from classes in style.css). The chart is a picture
// (role="img" with a name); the numbers behind it are the table the caller puts
// next to it.

const NS = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes (and text content for `text`/`title`). */
function s(tag, attrs = {}, text) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  }
  if (text !== undefined) el.textContent = text;
  return el;
}

/** Shortens a label to `n` characters with an ellipsis. */
function clip(text, n) {
  const t = String(text);
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

/** A "nice" upper bound for an axis whose largest value is `max`. */
function niceMax(max) {
  if (!(max > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

/**
 * A bar chart. `bars`: [{label, value, display}] (value a number, display its
 * text); `orientation`: 'columns' (one column per bar, labels under them — for a
 * time axis) or 'rows' (one row per bar, labels on the left — for names).
 * `name` is the accessible name; `format(v)` writes axis values.
 */
export function barChart({ bars, name, orientation = 'rows', format = String }) {
  const max = niceMax(Math.max(0, ...bars.map((b) => b.value)));
  const svg = s('svg', { role: 'img', 'aria-label': name, class: `chart chart-${orientation}` });
  svg.append(s('title', {}, name));
  if (orientation === 'columns') columns(svg, bars, max, format);
  else rows(svg, bars, max, format);
  return svg;
}

function rows(svg, bars, max, format) {
  const labelW = 170;
  const valueW = 96;
  const plotW = 420;
  const rowH = 24;
  const top = 22;
  const width = labelW + plotW + valueW;
  const height = top + Math.max(1, bars.length) * rowH + 6;
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  // Grid lines at quarters, with their values on top.
  for (let i = 0; i <= 4; i += 1) {
    const x = labelW + (plotW * i) / 4;
    svg.append(s('line', { x1: x, x2: x, y1: top - 4, y2: height - 4, class: 'chart-grid' }));
    svg.append(s('text', { x, y: 12, class: 'chart-axis', 'text-anchor': i === 0 ? 'start' : 'middle' }, format((max * i) / 4)));
  }
  bars.forEach((b, i) => {
    const y = top + i * rowH;
    const w = max > 0 ? Math.max(b.value > 0 ? 1 : 0, (plotW * b.value) / max) : 0;
    const g = s('g', { class: 'chart-bar' });
    g.append(s('title', {}, `${b.label}: ${b.display}`));
    g.append(s('text', { x: labelW - 8, y: y + rowH / 2 + 4, 'text-anchor': 'end', class: 'chart-label' }, clip(b.label, 24)));
    g.append(s('rect', { x: labelW, y: y + 4, width: w.toFixed(2), height: rowH - 8, rx: 2, class: `chart-fill${b.other ? ' chart-other' : ''}` }));
    g.append(s('text', { x: labelW + w + 6, y: y + rowH / 2 + 4, class: 'chart-value' }, b.display));
    svg.append(g);
  });
}

function columns(svg, bars, max, format) {
  const left = 64;
  const bottom = 40;
  const top = 12;
  const plotH = 200;
  const n = Math.max(1, bars.length);
  const colW = Math.max(6, Math.min(72, Math.floor(640 / n)));
  const plotW = colW * n;
  const width = left + plotW + 12;
  const height = top + plotH + bottom;
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('width', String(width));
  svg.setAttribute('height', String(height));
  for (let i = 0; i <= 4; i += 1) {
    const y = top + plotH - (plotH * i) / 4;
    svg.append(s('line', { x1: left, x2: left + plotW, y1: y, y2: y, class: 'chart-grid' }));
    svg.append(s('text', { x: left - 6, y: y + 4, 'text-anchor': 'end', class: 'chart-axis' }, format((max * i) / 4)));
  }
  // Label every k-th column so the labels never overlap (about 70 px each).
  const every = Math.max(1, Math.ceil(70 / colW));
  bars.forEach((b, i) => {
    const x = left + i * colW;
    const hgt = max > 0 ? Math.max(b.value > 0 ? 1 : 0, (plotH * b.value) / max) : 0;
    const g = s('g', { class: 'chart-bar' });
    g.append(s('title', {}, `${b.label}: ${b.display}`));
    g.append(s('rect', { x: x + 1, y: (top + plotH - hgt).toFixed(2), width: colW - 2, height: hgt.toFixed(2), rx: 1, class: 'chart-fill' }));
    if (i % every === 0 || i === bars.length - 1) {
      g.append(s('text', { x: x + colW / 2, y: top + plotH + 16, 'text-anchor': 'middle', class: 'chart-label' }, b.short || b.label));
    }
    svg.append(g);
  });
  svg.append(s('line', { x1: left, x2: left + plotW, y1: top + plotH, y2: top + plotH, class: 'chart-baseline' }));
}
