// New chat (#/new): pick a target (Model / Hecate agent / External agent), a model
// or an agent with its readiness, a workspace (recent ones offered) and a title;
// "Start chat" creates the session and opens it.

import { post, paths, isAbort } from '../api.js';
import { h, alertBox, showError, showMessage, clearAlert, field, uid, focusEl } from '../dom.js';
import { loadModels, loadAdapters, blockedText } from '../targets.js';

const RECENT_KEY = 'hecate.recentWorkspaces';

function recentWorkspaces() {
  try {
    const list = JSON.parse(localStorage.getItem(RECENT_KEY) || '[]');
    return Array.isArray(list) ? list.filter((x) => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

function rememberWorkspace(ws) {
  if (!ws) return;
  try {
    const list = [ws, ...recentWorkspaces().filter((x) => x !== ws)].slice(0, 10);
    localStorage.setItem(RECENT_KEY, JSON.stringify(list));
  } catch {
    /* storage unavailable */
  }
}

export function mountNewChat(root) {
  const ctrl = new AbortController();
  const heading = h('h1', { text: 'New chat' });
  const alert = alertBox();
  const name = uid('target');
  const radios = {};
  const radioRow = (value, label) => {
    const input = h('input', { type: 'radio', name, value, id: uid('rt') });
    radios[value] = input;
    return h('div', { class: 'radio' }, input, h('label', { for: input.id, text: label }));
  };
  const groupLabel = uid('tg');
  const targetGroup = h('div', { role: 'radiogroup', 'aria-labelledby': groupLabel, class: 'radiogroup' },
    h('span', { id: groupLabel, class: 'group-label', text: 'Target' }),
    radioRow('model', 'Model'), radioRow('agent', 'Hecate agent'), radioRow('external_agent', 'External agent'));
  radios.model.checked = true;

  const modelSelect = h('select', {}, h('option', { value: '', text: 'Loading models…' }));
  const modelNote = h('p', { class: 'hint', id: uid('mn') });
  const modelField = field('Model', modelSelect);
  modelField.append(modelNote);
  const agentSelect = h('select', {}, h('option', { value: '', text: 'Loading agents…' }));
  const agentNote = h('p', { class: 'hint' });
  const agentField = field('Agent', agentSelect);
  agentField.append(agentNote);
  const listId = uid('ws');
  const workspace = h('input', { type: 'text', list: listId, autocomplete: 'off', placeholder: '/path/to/project', spellcheck: 'false' });
  const datalist = h('datalist', { id: listId }, recentWorkspaces().map((w) => h('option', { value: w })));
  const wsField = field('Workspace', workspace, 'An existing directory; required for agents.');
  wsField.append(datalist);
  const title = h('input', { type: 'text', autocomplete: 'off' });
  const start = h('button', { type: 'submit', class: 'primary', text: 'Start chat' });
  const form = h('form', { class: 'new-chat', novalidate: true },
    targetGroup, modelField, agentField, wsField, field('Title', title), alert, h('div', { class: 'actions' }, start));
  root.replaceChildren(heading, form);

  let models = [];
  let adapters = [];

  const kind = () => Object.keys(radios).find((k) => radios[k].checked) || 'model';

  function selectedModel() {
    return models.find((m) => m.id === modelSelect.value) || null;
  }

  /** The reason Start chat is blocked now, or null. */
  function blocker() {
    const k = kind();
    if (k === 'external_agent') {
      const a = adapters.find((x) => x.id === agentSelect.value);
      if (!a) return { text: 'Choose an agent.' };
      if (!a.ready) return { text: `${a.name} is not ready: ${a.state}.`, action: a.fix };
      if (!workspace.value.trim()) return { text: 'An external agent needs a workspace.' };
      return null;
    }
    const m = selectedModel();
    if (!m && !modelSelect.value) return { text: models.length ? 'Choose a model.' : 'No model is available: configure a provider first.' };
    if (!m) return null; // not in the catalog: the server decides (and explains)
    if (!m.ready) return { text: `${m.id} cannot be started: ${blockedText(m.reason)} (${m.reason || 'not routing-ready'}).`, action: m.action };
    if (k === 'agent' && !workspace.value.trim()) return { text: "Hecate's agent needs a workspace." };
    return null;
  }

  function sync() {
    const k = kind();
    modelField.hidden = k === 'external_agent';
    agentField.hidden = k !== 'external_agent';
    const m = selectedModel();
    modelNote.textContent = m && !m.ready ? `Not routing-ready: ${blockedText(m.reason)}.${m.action ? ' ' + m.action : ''}` : '';
    const a = adapters.find((x) => x.id === agentSelect.value);
    agentNote.textContent = a ? (a.ready ? `${a.name}: ready.` : `${a.name}: ${a.state}. ${a.fix}`) : '';
    const b = blocker();
    // Show the readiness problem at once; "still needs a field" waits for submit.
    if (b && ((k !== 'external_agent' && m && !m.ready) || (k === 'external_agent' && a && !a.ready))) showMessage(alert, b.text, b.action);
    else if (alert.dataset.kind !== 'api') clearAlert(alert);
    start.setAttribute('aria-disabled', b && ((m && !m.ready && k !== 'external_agent') || (a && !a.ready && k === 'external_agent')) ? 'true' : 'false');
  }

  for (const r of Object.values(radios)) r.addEventListener('change', () => { alert.dataset.kind = ''; sync(); });
  modelSelect.addEventListener('change', () => { alert.dataset.kind = ''; sync(); });
  agentSelect.addEventListener('change', () => { alert.dataset.kind = ''; sync(); });

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    alert.dataset.kind = '';
    const b = blocker();
    if (b) {
      showMessage(alert, b.text, b.action);
      return;
    }
    const k = kind();
    const body = { runtime_kind: k };
    if (k === 'external_agent') body.adapter_id = agentSelect.value;
    else body.model = modelSelect.value;
    const ws = workspace.value.trim();
    if (ws) body.workspace = ws;
    if (title.value.trim()) body.title = title.value.trim();
    start.disabled = true;
    try {
      const res = await post(paths.sessions, body, { signal: ctrl.signal });
      rememberWorkspace(res.data.workspace || ws);
      location.hash = `#/chats/${encodeURIComponent(res.data.id)}`;
    } catch (err) {
      if (isAbort(err)) return;
      alert.dataset.kind = 'api';
      showError(alert, err);
    } finally {
      start.disabled = false;
    }
  });

  loadModels(ctrl.signal).then((list) => {
    models = list;
    modelSelect.replaceChildren(...(list.length ? list.map((m) => h('option', {
      value: m.id,
      text: m.ready ? m.id : `${m.id} — not ready (${m.reason || 'blocked'})`,
      dataset: { ready: String(m.ready) },
    })) : [h('option', { value: '', text: 'No models available' })]));
    sync();
  }).catch((err) => {
    if (isAbort(err)) return;
    modelSelect.replaceChildren(h('option', { value: '', text: 'Models unavailable' }));
    alert.dataset.kind = 'api';
    showError(alert, err);
  });
  loadAdapters(ctrl.signal).then((list) => {
    adapters = list;
    agentSelect.replaceChildren(...(list.length ? list.map((a) => h('option', {
      value: a.id,
      text: `${a.name} — ${a.state}`,
      dataset: { ready: String(a.ready) },
    })) : [h('option', { value: '', text: 'No agents known' })]));
    const firstReady = list.find((a) => a.ready);
    if (firstReady) agentSelect.value = firstReady.id;
    sync();
  }).catch((err) => {
    if (isAbort(err)) return;
    agentSelect.replaceChildren(h('option', { value: '', text: 'Agents unavailable' }));
  });
  workspace.addEventListener('input', () => { if (alert.dataset.kind !== 'api') clearAlert(alert); });
  sync();
  focusEl(heading);
  return { unmount: () => ctrl.abort() };
}
