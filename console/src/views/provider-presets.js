// The Providers page's presets (GET /hecate/v1/providers/presets: each with
// the PROVIDER_<NAME>_* variables that configure it, in a <pre> with a Copy
// button) and local discovery (GET /hecate/v1/settings/providers/local-discovery:
// which local model servers run, or are installed, on their default ports).

import { get, paths, isAbort } from '../api.js';
import { h, alertBox, showError, uid } from '../dom.js';

/** Copies `text`: the Clipboard API, else the selection and execCommand. */
async function copyText(text, pre) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const range = document.createRange();
    range.selectNodeContents(pre);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
  }
}

function presetItem(p) {
  const id = uid('preset');
  const pre = h('pre', { class: 'provider-env', 'aria-label': `Environment for ${p.name}`, tabindex: '0', text: p.env_snippet });
  const said = h('span', { class: 'copy-note', 'aria-live': 'polite' });
  const copy = h('button', { type: 'button', text: 'Copy', 'aria-label': `Copy the ${p.name} environment` });
  copy.addEventListener('click', async () => {
    said.textContent = (await copyText(p.env_snippet, pre))
      ? 'Copied.'
      : 'The clipboard refused: the text is selected, copy it by hand.';
  });
  return h('li', { class: 'provider-preset', 'aria-labelledby': id, dataset: { presetId: p.id, kind: p.kind } },
    h('h3', { id, text: p.name }),
    h('p', { class: 'session-meta' },
      h('span', { class: `badge provider-kind`, text: p.kind }), h('span', { text: p.protocol }),
      h('code', { text: p.base_url }), h('span', { text: `start with ${p.default_model}` }),
      p.command ? h('span', {}, 'command ', h('code', { text: p.command })) : null),
    h('p', { class: 'hint', text: p.description }),
    pre,
    h('div', { class: 'actions' }, copy, said),
    p.api_key_env ? h('p', { class: 'hint', text: `Keep the key in ${p.api_key_env}; the snippet reads it from there.` }) : null);
}

export function mountPresets(root, signal) {
  const alert = alertBox();
  const list = h('ul', { class: 'provider-presets', 'aria-label': 'Presets' });
  root.replaceChildren(
    h('p', { class: 'hint', text: 'Set these variables where hecate serve starts (or write the same keys under [providers.<name>] in the config file), then restart it.' }),
    alert, list);
  get(paths.providerPresets, { signal })
    .then((res) => list.replaceChildren(...((res && res.data) || []).map(presetItem)))
    .catch((err) => { if (!isAbort(err)) showError(alert, err); });
}

const DISCOVERY_TEXT = { running: 'running', installed: 'installed, not running', not_detected: 'not detected' };

export function mountDiscovery(root, signal) {
  const alert = alertBox();
  const body = h('tbody', {}, h('tr', {}, h('td', { colspan: 5, class: 'hint', text: 'Looking for local servers…' })));
  const table = h('table', { class: 'steps', 'aria-label': 'Local discovery', 'aria-busy': 'true' },
    h('thead', {}, h('tr', {}, ['Server', 'State', 'Base URL', 'Command', 'Models'].map((t) => h('th', { scope: 'col', text: t })))),
    body);
  root.replaceChildren(h('p', { class: 'hint', text: 'Each local preset\'s default address is asked once, and its command looked for on PATH. Nothing is configured by this.' }),
    alert, table);
  get(paths.localDiscovery, { signal })
    .then((res) => {
      const rows = (res && res.data) || [];
      body.replaceChildren(...rows.map((d) => h('tr', { dataset: { presetId: d.preset_id, status: d.status } },
        h('td', { text: d.name }),
        h('td', {}, h('span', { class: `badge discovery-${d.status}`, text: DISCOVERY_TEXT[d.status] || d.status })),
        h('td', {}, h('code', { text: d.base_url })),
        h('td', {}, h('code', { text: d.command_path || d.command }), d.command_available ? '' : ' (not on PATH)'),
        h('td', { text: d.models.length ? d.models.join(', ') : String(d.model_count) }))));
    })
    .catch((err) => { if (!isAbort(err)) showError(alert, err); })
    .finally(() => table.removeAttribute('aria-busy'));
}
