// The Keys page (#/keys): the hub's named API keys (role, scope, state, who
// created them, expiry, last use) with a "Revoke" button on each live one, and a
// form to create one (Name, Role, Limit to, Expires in, Create key). A new key's
// token is shown once, in a "New key" box with a Copy button, and forgotten when
// the page is left. Managing keys takes an admin: anyone else sees the 403.

import { get, post, del, paths, isAbort } from '../api.js';
import { h, alertBox, showError, clearAlert, field, timeEl, focusEl, actionButton } from '../dom.js';

/** The line under a key's name: scope, creator and the times that apply. */
function details(k) {
  const bits = [h('span', { class: 'hint' }, ' created ', timeEl(k.created_at), ` by ${k.created_by}`)];
  if (k.revoked_at) bits.push(h('span', { class: 'hint' }, ' · revoked ', timeEl(k.revoked_at)));
  else if (k.expires_at) bits.push(h('span', { class: 'hint' }, k.state === 'expired' ? ' · expired ' : ' · expires ', timeEl(k.expires_at)));
  else bits.push(h('span', { class: 'hint', text: ' · no expiry' }));
  bits.push(k.last_used_at
    ? h('span', { class: 'hint' }, ' · last used ', timeEl(k.last_used_at))
    : h('span', { class: 'hint', text: ' · never used' }));
  return bits;
}

export function mountKeys(root) {
  const ctrl = new AbortController();
  const heading = h('h1', { text: 'Keys' });
  const alert = alertBox();
  const intro = h('p', { class: 'hint', text: 'Named API keys for the people and programs sharing this hub. A key acts with its role (read, operator or admin), within its scope; requests presenting a revoked or expired key get 401.' });
  const list = h('ul', { 'aria-label': 'Keys', class: 'grant-list' });
  const note = h('p', { class: 'hint' });

  const name = h('input', { type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', pattern: '[A-Za-z0-9_.@-]+' });
  const role = h('select', {},
    h('option', { value: 'read', text: 'Read' }),
    h('option', { value: 'operator', text: 'Operator' }),
    h('option', { value: 'admin', text: 'Admin' }));
  const limits = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'namespace:team-a, server:github, tool:linear/create_issue' });
  const expires = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: '30d' });
  const submit = h('button', { type: 'submit', class: 'primary', text: 'Create key' });
  const formAlert = alertBox();
  const form = h('form', { class: 'grant-form', 'aria-labelledby': 'key-form-title', novalidate: true },
    h('h2', { id: 'key-form-title', text: 'Create a key' }),
    formAlert,
    field('Name', name, 'Letters, digits, -, _, . or @; unique among live keys.'),
    field('Role', role, 'Read only reads; operator also acts (messages, approvals, tasks, model calls, editors over ACP); admin also manages the hub (keys, tool policies, agent installs).'),
    field('Limit to', limits, 'Optional, comma-separated: namespace:NAME, server:NAME (hecate for Hecate\'s own tools), tool:SERVER/TOOL.'),
    field('Expires in', expires, 'A duration like 90m, 12h or 30d; leave empty for a key that stands until revoked.'),
    h('div', { class: 'actions' }, submit));

  // The token of the key just created: shown once, never stored by the page.
  const secretTitle = h('h2', { id: 'new-key-title', text: 'New key' });
  const secret = h('input', { type: 'text', readonly: true, class: 'secret', spellcheck: 'false', 'aria-labelledby': 'new-key-title' });
  const copy = h('button', { type: 'button', text: 'Copy' });
  const copied = h('span', { class: 'hint', role: 'status' });
  const secretBox = h('section', { class: 'grant-form new-key', 'aria-labelledby': 'new-key-title', hidden: true },
    secretTitle,
    h('p', { text: 'Copy the token now: it is not shown again. Send it as Authorization: Bearer <token>.' }),
    h('div', { class: 'actions' }, secret, copy, copied));
  copy.addEventListener('click', async () => {
    secret.select();
    try {
      await navigator.clipboard.writeText(secret.value);
      copied.textContent = 'Copied.';
    } catch {
      copied.textContent = 'Selected: copy it with the keyboard.';
    }
  });

  root.replaceChildren(heading, alert, intro, secretBox, h('h2', { text: 'All keys' }), note, list, form);

  async function load() {
    try {
      const res = await get(paths.keys, { signal: ctrl.signal });
      const keys = (res && res.data) || [];
      list.replaceChildren();
      for (const k of keys) {
        const id = `key-${k.id}`;
        const item = h('li', { class: 'grant', dataset: { keyId: k.id, state: k.state } },
          h('div', { id },
            h('strong', { text: k.name }), ' · ',
            h('span', { text: k.role }), ' · ',
            h('span', { class: `state state-${k.state}`, text: k.state }),
            ...(k.scope || []).filter((s) => s !== k.role).map((s) => [' · ', h('code', { text: s })]).flat(),
            h('br'),
            ...details(k)));
        if (k.state === 'active') {
          item.append(actionButton({ text: 'Revoke', 'aria-describedby': id }, alert, async () => {
            await del(paths.key(k.id));
            await load();
            focusEl(heading);
          }));
        }
        list.append(item);
      }
      note.textContent = keys.length ? '' : 'No keys yet: only the hub\'s own token (if it has one) opens it.';
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    }
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearAlert(formAlert);
    const keyName = name.value.trim();
    if (!keyName) {
      showError(formAlert, new Error('Name is required.'));
      name.focus();
      return;
    }
    const scope = [role.value, ...limits.value.split(',').map((s) => s.trim()).filter(Boolean)];
    const body = { name: keyName, scope };
    if (expires.value.trim()) body.expires_in = expires.value.trim();
    submit.disabled = true;
    try {
      const created = await post(paths.keys, body, { signal: ctrl.signal });
      secret.value = created.token;
      copied.textContent = '';
      secretBox.hidden = false;
      name.value = '';
      limits.value = '';
      expires.value = '';
      await load();
      focusEl(secretTitle);
    } catch (err) {
      if (isAbort(err)) return;
      showError(formAlert, err);
      const f = err && err.envelope && err.envelope.field;
      if (f === 'scope') limits.focus();
      else if (f === 'expires_in') expires.focus();
      else name.focus();
    } finally {
      submit.disabled = false;
    }
  });

  load();
  focusEl(heading);
  return {
    unmount: () => {
      ctrl.abort();
      secret.value = '';
    },
  };
}
