// The "Access token" dialog: asks for the API token after a 401 and keeps it in
// sessionStorage (key hecate.token), never in localStorage or a URL.

import { h, uid } from './dom.js';

const KEY = 'hecate.token';
let pending = null;

export function getToken() {
  try {
    return sessionStorage.getItem(KEY) || '';
  } catch {
    return '';
  }
}

export function setToken(token) {
  try {
    if (token) sessionStorage.setItem(KEY, token);
    else sessionStorage.removeItem(KEY);
  } catch {
    /* storage unavailable: the token lives only for this request */
  }
}

/** The open dialog's promise, when one is asking (other requests wait for it). */
export function tokenPrompt() {
  return pending;
}

/**
 * Opens the dialog (once, however many requests are waiting) and resolves with
 * the token the operator saved, or null when they dismissed it.
 */
export function askForToken(rejected) {
  if (pending) return pending;
  pending = new Promise((resolve) => {
    const titleId = uid('token-title');
    const input = h('input', { type: 'password', id: uid('token'), autocomplete: 'current-password', required: true });
    const note = h('p', {
      class: 'hint',
      text: rejected
        ? 'The server refused the stored token. Enter the token `hecate serve` was started with.'
        : 'This server needs a token. Enter the token `hecate serve` was started with ([server] token or HECATE_TOKEN).',
    });
    const save = h('button', { type: 'submit', class: 'primary', text: 'Save token' });
    const cancel = h('button', { type: 'button', text: 'Cancel' });
    const form = h('form', { method: 'dialog' },
      h('h2', { id: titleId, text: 'Access token' }),
      note,
      h('div', { class: 'field' }, h('label', { for: input.id, text: 'Access token' }), input),
      h('div', { class: 'actions' }, save, cancel));
    const dialog = h('dialog', { 'aria-labelledby': titleId, class: 'token-dialog' }, form);
    let result = null;
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const value = input.value.trim();
      if (!value) {
        input.focus();
        return;
      }
      result = value;
      setToken(value);
      dialog.close();
    });
    cancel.addEventListener('click', () => dialog.close());
    dialog.addEventListener('close', () => {
      dialog.remove();
      pending = null;
      resolve(result);
    });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
  });
  return pending;
}
