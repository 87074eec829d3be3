// The composer: textarea "Message", "Send" (Ctrl/Cmd+Enter), select "Next turn
// target", the busy status with "Stop" and "Open task", and the "Queued next"
// list (Edit -> inline textarea + Save, Remove) backed by the session's queue.

import { h, field, uid } from '../dom.js';

/** Target option values: '' keep, 'model:<id>', 'agent', 'external:<adapter>'. */
export function targetFromValue(value, label) {
  if (!value) return { label: 'session target' };
  if (value === 'agent') return { runtime_kind: 'agent', label };
  if (value.startsWith('model:')) return { runtime_kind: 'model', model: value.slice(6), label };
  if (value.startsWith('external:')) return { runtime_kind: 'external_agent', adapter_id: value.slice(9), label };
  return { label: 'session target' };
}

/**
 * Builds the composer. `opts`: onSubmit(content, target) -> Promise<boolean>
 * (true when the text was taken), onStop(), queue (sessionQueue).
 */
export function createComposer({ onSubmit, onStop, queue }) {
  const text = h('textarea', { rows: '4', placeholder: 'Ask something… (Ctrl+Enter to send)' });
  const target = h('select', {}, h('option', { value: '', text: "Keep the session's target" }));
  const send = h('button', { type: 'submit', class: 'primary', text: 'Send' });
  const status = h('div', { role: 'status', class: 'turn-status', 'aria-live': 'polite' });
  const stop = h('button', { type: 'button', class: 'danger-button', text: 'Stop', hidden: true });
  const openTask = h('a', { class: 'button', text: 'Open task', hidden: true, href: '#/chats' });
  const busyRow = h('div', { class: 'busy-row' }, status, stop, openTask);
  const queueHeading = h('h2', { id: uid('qh'), text: 'Queued next', class: 'queue-heading' });
  const queueList = h('ul', { 'aria-label': 'Queued next', class: 'queue' });
  const queueBox = h('section', { class: 'queue-box', 'aria-labelledby': queueHeading.id, hidden: true }, queueHeading,
    h('p', { class: 'hint', text: 'Sent in order when the running turn ends.' }), queueList);
  const form = h('form', { class: 'composer', 'aria-label': 'Composer', novalidate: true },
    busyRow,
    field('Message', text),
    h('div', { class: 'composer-row' }, field('Next turn target', target), h('div', { class: 'actions' }, send)));
  const el = h('div', { class: 'composer-wrap' }, queueBox, form);

  async function submit() {
    const content = text.value;
    if (!content.trim()) {
      text.focus();
      return;
    }
    const opt = target.selectedOptions[0];
    const chosen = targetFromValue(target.value, opt ? opt.textContent : '');
    send.disabled = true;
    try {
      const taken = await onSubmit(content, chosen);
      if (taken) text.value = '';
    } finally {
      send.disabled = false;
      text.focus();
    }
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    submit();
  });
  text.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      submit();
    }
  });
  stop.addEventListener('click', () => onStop());

  function renderQueue() {
    const entries = queue.list();
    queueBox.hidden = entries.length === 0;
    const focused = document.activeElement;
    const focusKey = focused && queueList.contains(focused) ? focused.dataset.key : null;
    queueList.replaceChildren();
    entries.forEach((e, i) => {
      const body = h('p', { class: 'queued-text', text: e.content });
      const tgt = h('p', { class: 'hint', text: `#${i + 1} · target: ${(e.target && e.target.label) || 'session target'}` });
      const edit = h('button', { type: 'button', class: 'small', text: 'Edit', dataset: { key: `edit-${e.id}` } });
      const remove = h('button', { type: 'button', class: 'small', text: 'Remove', dataset: { key: `remove-${e.id}` } });
      const li = h('li', { class: 'queued', dataset: { queueId: e.id } }, body, tgt, h('div', { class: 'actions' }, edit, remove));
      edit.addEventListener('click', () => {
        const area = h('textarea', { rows: '3', value: e.content });
        const save = h('button', { type: 'button', class: 'small primary', text: 'Save' });
        const cancel = h('button', { type: 'button', class: 'small', text: 'Cancel' });
        const editor = h('div', { class: 'queue-edit' }, field('Queued prompt text', area), h('div', { class: 'actions' }, save, cancel));
        li.replaceChildren(editor, tgt);
        area.focus();
        save.addEventListener('click', () => {
          if (area.value.trim()) queue.update(e.id, area.value);
          renderQueue();
          const again = queueList.querySelector(`[data-key="edit-${e.id}"]`);
          if (again) again.focus();
        });
        cancel.addEventListener('click', () => {
          renderQueue();
          const again = queueList.querySelector(`[data-key="edit-${e.id}"]`);
          if (again) again.focus();
        });
      });
      remove.addEventListener('click', () => {
        queue.remove(e.id);
        renderQueue();
        const first = queueList.querySelector('button');
        (first || text).focus();
      });
      queueList.append(li);
    });
    if (focusKey) {
      const again = queueList.querySelector(`[data-key="${focusKey}"]`);
      if (again) again.focus();
    }
  }

  /** Shows the busy state: {busy, label, taskId, canStop}. */
  function setBusy({ busy, label, taskId }) {
    const want = busy ? label : '';
    if (status.textContent !== want) status.textContent = want;
    stop.hidden = !busy;
    if (busy && taskId) {
      openTask.href = `#/tasks/${encodeURIComponent(taskId)}`;
      openTask.hidden = false;
    } else {
      openTask.hidden = true;
    }
    form.dataset.busy = busy ? 'true' : 'false';
  }

  /** Fills "Next turn target": models [{id, ready}], adapters [{id, name, ready}]. */
  function setTargets(models, adapters, session) {
    const keep = target.value;
    const opts = [h('option', { value: '', text: "Keep the session's target" })];
    if (models.length) {
      opts.push(h('optgroup', { label: 'Model' }, models.map((m) => h('option', { value: `model:${m.id}`, text: `Model ${m.id}${m.ready ? '' : ' (not ready)'}` }))));
    }
    const agentLabel = session && session.model ? `Hecate agent (${[session.provider, session.model].filter(Boolean).join('/')})` : 'Hecate agent';
    opts.push(h('option', { value: 'agent', text: agentLabel }));
    if (adapters.length) {
      opts.push(h('optgroup', { label: 'External agent' }, adapters.map((a) => h('option', { value: `external:${a.id}`, text: `External agent ${a.name}${a.ready ? '' : ` (${a.state})`}` }))));
    }
    target.replaceChildren(...opts);
    target.value = [...target.options].some((o) => o.value === keep) ? keep : '';
  }

  return { el, text, renderQueue, setBusy, setTargets, focus: () => text.focus() };
}
