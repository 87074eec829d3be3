// DOM helpers shared by every view: element builder, error alert, formatters.
// Text is only ever set through textContent; nothing here parses HTML.

/** Builds an element: h('a', {href, class, dataset:{}, on:{click}}, ...children). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'on') for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    else if (k === 'value' || k === 'checked' || k === 'disabled' || k === 'selected' || k === 'open') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** An alert element (empty and hidden until showError/showMessage fills it). */
export function alertBox() {
  const el = h('div', { role: 'alert', class: 'alert', hidden: true });
  return el;
}

/** Shows an API error (or any error) in an alert element. */
export function showError(box, err) {
  box.replaceChildren();
  box.classList.remove('info');
  const env = err && err.envelope;
  if (env) {
    box.append(h('p', { class: 'alert-message', text: env.message || env.user_message || env.type }));
    if (env.user_message && env.user_message !== env.message) box.append(h('p', { text: env.user_message }));
    if (env.operator_action) box.append(h('p', { class: 'alert-action', text: env.operator_action }));
    if (Array.isArray(env.suggested_models) && env.suggested_models.length) {
      box.append(h('p', { text: 'Suggested models: ' + env.suggested_models.join(', ') }));
    }
    if (env.type) box.append(h('p', { class: 'alert-type' }, h('code', { text: env.type })));
  } else {
    box.append(h('p', { class: 'alert-message', text: (err && err.message) || String(err) }));
  }
  box.hidden = false;
}

/** Shows a plain message in an alert element. */
export function showMessage(box, text, extra) {
  box.replaceChildren(h('p', { class: 'alert-message', text }));
  if (extra) box.append(h('p', { class: 'alert-action', text: extra }));
  box.hidden = false;
}

export function clearAlert(box) {
  box.hidden = true;
  box.replaceChildren();
}

/** A button (`attrs` its text and ARIA) that runs `action` when clicked: disabled
 * while it runs (and after, when it succeeded); a failure enables it again and
 * shows the error in `alert` (an abort, the view going away, shows nothing). */
export function actionButton(attrs, alert, action) {
  const button = h('button', { type: 'button', ...attrs });
  button.addEventListener('click', async () => {
    clearAlert(alert);
    button.disabled = true;
    try {
      await action();
    } catch (err) {
      if (err && err.name === 'AbortError') return;
      button.disabled = false;
      showError(alert, err);
    }
  });
  return button;
}

/** USD cost from micros (or a usd number). */
export function formatCost(micros, usd) {
  let v = typeof usd === 'number' ? usd : typeof micros === 'number' ? micros / 1e6 : null;
  if (v === null) return '';
  return '$' + (v < 0.01 && v > 0 ? v.toFixed(6) : v.toFixed(4));
}

export function formatDuration(ms) {
  if (typeof ms !== 'number') return '';
  if (ms < 1000) return ms + ' ms';
  if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
  return Math.floor(ms / 60000) + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
}

export function formatTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString();
}

/** A <time> element for an ISO timestamp. */
export function timeEl(iso) {
  return h('time', { datetime: iso || '', text: formatTime(iso) });
}

/** Moves focus to an element (making it focusable when it is not). */
export function focusEl(el) {
  if (!el) return;
  if (!el.hasAttribute('tabindex') && !/^(A|BUTTON|INPUT|SELECT|TEXTAREA)$/.test(el.tagName)) {
    el.setAttribute('tabindex', '-1');
  }
  el.focus({ preventScroll: false });
}

let idCounter = 0;
/** A unique element id with a prefix. */
export function uid(prefix = 'id') {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

/** A label + control pair in a div.field. */
export function field(labelText, control, hint) {
  if (!control.id) control.id = uid('f');
  const label = h('label', { for: control.id, text: labelText });
  const wrap = h('div', { class: 'field' }, label, control);
  if (hint) {
    const hintEl = h('p', { class: 'hint', id: uid('hint') }, hint);
    control.setAttribute('aria-describedby', hintEl.id);
    wrap.append(hintEl);
  }
  return wrap;
}
