// The Providers page's models: every routable provider/model from GET /v1/models
// with its effective capabilities (tool calling, streaming, vision, context
// window, and which source said so), a form that stores or removes an operator
// override (PUT / DELETE /hecate/v1/model-capabilities/overrides) and a probe
// per model (POST /hecate/v1/model-capabilities/probes: Hecate asks the model to
// call a tool and records what it did).

import { get, del, request, paths, isAbort } from '../api.js';
import { h, alertBox, showError, clearAlert, field, focusEl } from '../dom.js';

const yesNo = (v) => (v === true ? 'yes' : v === false ? 'no' : 'unknown');

/** The models of a /v1/models answer, one per provider/model pair. */
function pairs(body) {
  const seen = new Map();
  for (const m of (body && body.data) || []) {
    const meta = m.metadata || {};
    const provider = meta.provider || m.owned_by || '';
    const model = meta.model || m.id;
    const id = `${provider}/${model}`;
    if (!provider || seen.has(id)) continue;
    seen.set(id, { id, provider, model, source: meta.discovery_source || '', isDefault: Boolean(meta.default), caps: meta.capabilities || {} });
  }
  return [...seen.values()].sort((a, b) => a.id.localeCompare(b.id));
}

function triState() {
  return h('select', {}, h('option', { value: '', text: 'Not said' }),
    h('option', { value: 'true', text: 'Yes' }), h('option', { value: 'false', text: 'No' }));
}

export function mountModels(root, signal) {
  const alert = alertBox();
  const note = h('p', { class: 'hint', 'aria-live': 'polite' });
  const body = h('tbody');
  const table = h('table', { class: 'steps provider-models-table', 'aria-label': 'Models' },
    h('thead', {}, h('tr', {}, ['Model', 'Listed by', 'Tool calling', 'Streaming', 'Vision', 'Context', 'Said by', ''].map((t) => h('th', { scope: 'col', text: t })))),
    body);

  // The override form.
  const formAlert = alertBox();
  const formNote = h('p', { class: 'hint', 'aria-live': 'polite' });
  const pick = h('select', { required: true });
  const tools = h('select', { required: true },
    ['none', 'basic', 'parallel'].map((v) => h('option', { value: v, text: v })));
  const streaming = triState();
  const vision = triState();
  const context = h('input', { type: 'number', min: 1, step: 1, inputmode: 'numeric' });
  const why = h('input', { type: 'text', autocomplete: 'off', maxlength: 500 });
  const remove = h('button', { type: 'button', text: 'Remove override' });
  const form = h('form', { class: 'task-form provider-override', 'aria-label': 'Capability override' },
    field('Model', pick), field('Tool calling', tools), field('Streaming', streaming), field('Vision', vision),
    field('Context window (tokens)', context), field('Note', why, 'Shown back with the override.'),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', text: 'Save override' }), remove),
    formAlert, formNote);
  root.replaceChildren(alert, table, note, h('h3', { text: 'Override capabilities' }),
    h('p', { class: 'hint', text: 'An override wins over probes, the configuration and the catalog, and is shared by every Hecate on this store.' }),
    form);

  let rows = [];
  const split = () => {
    const row = rows.find((r) => r.id === pick.value);
    return row ? { provider: row.provider, model: row.model } : null;
  };

  function fill(r) {
    pick.value = r.id;
    const c = r.caps || {};
    if (['none', 'basic', 'parallel'].includes(c.tool_calling)) tools.value = c.tool_calling;
    streaming.value = '';
    vision.value = c.vision === undefined ? '' : String(c.vision);
    context.value = c.max_context_tokens ?? '';
    clearAlert(formAlert);
    formNote.textContent = '';
  }

  async function probe(r, button, cell) {
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    cell.textContent = 'probing…';
    clearAlert(alert);
    try {
      const res = (await request('POST', paths.capabilityProbes, { body: { provider: r.provider, model: r.model }, signal })).data;
      const seen = res.tool_calls_seen === undefined ? '' : `, ${res.tool_calls_seen} tool call(s) seen`;
      note.textContent = `Probe of ${r.id}: tool calling ${res.tool_calling || 'unknown'}${seen}.`;
      await reload();
    } catch (err) {
      cell.textContent = '';
      if (!isAbort(err)) showError(alert, err);
    } finally {
      button.disabled = false;
      button.removeAttribute('aria-busy');
    }
  }

  function row(r) {
    const c = r.caps || {};
    const probeCell = h('span', { class: 'probe-result' });
    const probeBtn = h('button', { type: 'button', text: 'Probe', 'aria-label': `Probe ${r.id}` });
    probeBtn.addEventListener('click', () => probe(r, probeBtn, probeCell));
    const overrideBtn = h('button', { type: 'button', text: 'Override', 'aria-label': `Override ${r.id}` });
    overrideBtn.addEventListener('click', () => { fill(r); focusEl(tools); });
    return h('tr', { dataset: { modelId: r.id, toolCalling: c.tool_calling || 'unknown', source: c.source || '' } },
      h('td', {}, h('code', { text: r.id }), r.isDefault ? h('span', { class: 'badge', text: 'default' }) : null),
      h('td', { text: r.source === 'config' ? 'configuration' : r.source === 'provider' ? 'provider' : r.source }),
      h('td', { class: 'cap-tools', text: c.tool_calling || 'unknown' }),
      h('td', { text: c.streaming === undefined ? 'unknown' : yesNo(c.streaming) }),
      h('td', { text: yesNo(c.vision) }),
      h('td', { class: 'num', text: c.max_context_tokens ? c.max_context_tokens.toLocaleString('en') : 'unknown' }),
      h('td', { class: 'cap-source', text: c.source || '' }),
      h('td', { class: 'actions' }, overrideBtn, probeBtn, probeCell));
  }

  async function reload() {
    clearAlert(alert);
    table.setAttribute('aria-busy', 'true');
    try {
      rows = pairs(await get(paths.models, { signal }));
      body.replaceChildren(...rows.map(row));
      if (!rows.length) body.append(h('tr', {}, h('td', { colspan: 8, class: 'hint', text: 'No model is known: configure a provider, or declare its models.' })));
      const keep = pick.value;
      pick.replaceChildren(...rows.map((r) => h('option', { value: r.id, text: r.id })));
      if (rows.some((r) => r.id === keep)) pick.value = keep;
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    } finally {
      table.removeAttribute('aria-busy');
    }
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearAlert(formAlert);
    const pair = split();
    if (!pair) return;
    const payload = { ...pair, tool_calling: tools.value };
    if (streaming.value) payload.streaming = streaming.value === 'true';
    if (vision.value) payload.vision = vision.value === 'true';
    if (context.value) payload.max_context_tokens = Number(context.value);
    if (why.value.trim()) payload.note = why.value.trim();
    try {
      const res = (await request('PUT', paths.capabilityOverrides, { body: payload, signal })).data;
      formNote.textContent = `Saved: ${res.provider}/${res.model} now calls tools ${res.effective.tool_calling} (said by ${res.effective.source}).`;
      await reload();
    } catch (err) {
      formNote.textContent = '';
      if (!isAbort(err)) showError(formAlert, err);
    }
  });
  remove.addEventListener('click', async () => {
    clearAlert(formAlert);
    const pair = split();
    if (!pair) return;
    try {
      const res = (await del(paths.capabilityOverrides, { query: pair, signal })).data;
      formNote.textContent = `Removed: ${res.provider}/${res.model} calls tools ${res.effective.tool_calling} (said by ${res.effective.source}).`;
      await reload();
    } catch (err) {
      formNote.textContent = '';
      if (!isAbort(err)) showError(formAlert, err);
    }
  });

  return { reload };
}
