// The Grants page (#/grants): the namespace's standing approval grants with a
// "Revoke" button each, and a form to create one (Tool, Scope with its target,
// Decision, Expires in (minutes), Create grant).

import { get, post, del, paths, isAbort } from '../api.js';
import { h, alertBox, showError, clearAlert, field, timeEl, focusEl, actionButton } from '../dom.js';

const TARGET = {
  session: { key: 'session_id', label: 'Session id' },
  workspace_tool: { key: 'workspace', label: 'Workspace directory' },
  adapter_tool: { key: 'adapter_id', label: 'Agent adapter id' },
};

export function mountGrants(root) {
  const ctrl = new AbortController();
  const heading = h('h1', { text: 'Grants' });
  const alert = alertBox();
  const list = h('ul', { 'aria-label': 'Grants', class: 'grant-list' });
  const note = h('p', { class: 'hint' });

  const tool = h('input', { type: 'text', required: true, placeholder: 'edit, execute, read…', list: 'tool-kinds' });
  const kinds = h('datalist', { id: 'tool-kinds' }, ['read', 'edit', 'execute', 'fetch', 'delete', 'move', 'search', 'think', 'other'].map((k) => h('option', { value: k })));
  const scope = h('select', {},
    h('option', { value: 'session', text: 'Session' }),
    h('option', { value: 'workspace_tool', text: 'Workspace tool' }),
    h('option', { value: 'adapter_tool', text: 'Adapter tool' }));
  const target = h('input', { type: 'text', required: true });
  const targetField = field('Session id', target);
  const decision = h('select', {}, h('option', { value: 'approve', text: 'Approve' }), h('option', { value: 'reject', text: 'Reject' }));
  const expires = h('input', { type: 'number', min: '1', step: '1', inputmode: 'numeric' });
  const submit = h('button', { type: 'submit', class: 'primary', text: 'Create grant' });
  const formAlert = alertBox();
  const form = h('form', { class: 'grant-form', 'aria-labelledby': 'grant-form-title', novalidate: true },
    h('h2', { id: 'grant-form-title', text: 'Create a grant' }),
    formAlert,
    field('Tool', tool, 'The tool kind the grant answers (edit, execute, read, …).'), kinds,
    field('Scope', scope),
    targetField,
    field('Decision', decision),
    field('Expires in (minutes)', expires, 'Leave empty for a grant that stands until revoked.'),
    h('div', { class: 'actions' }, submit));

  function syncTarget() {
    const t = TARGET[scope.value];
    targetField.querySelector('label').textContent = t.label;
  }
  scope.addEventListener('change', syncTarget);
  syncTarget();

  root.replaceChildren(heading, alert, h('h2', { text: 'In force' }), note, list, form);

  async function load() {
    try {
      const res = await get(paths.grants, { signal: ctrl.signal });
      const grants = (res && res.data) || [];
      list.replaceChildren();
      for (const g of grants) {
        const revoke = actionButton({ text: 'Revoke', 'aria-describedby': `grant-${g.id}` }, alert, async () => {
          await del(paths.grant(g.id));
          await load();
          focusEl(heading);
        });
        const li = h('li', { class: 'grant', dataset: { grantId: g.id } },
          h('div', { id: `grant-${g.id}` },
            h('strong', { text: `${g.decision} ${g.tool_kind}` }), ' · ',
            h('span', { text: g.scope }), ' · ',
            h('code', { text: g.session_id || g.workspace || g.adapter_id || '' }),
            h('span', { class: 'hint' }, ' created ', timeEl(g.created_at)),
            g.expires_at ? h('span', { class: 'hint' }, ' · expires ', timeEl(g.expires_at)) : h('span', { class: 'hint', text: ' · no expiry' })),
          revoke);
        list.append(li);
      }
      note.textContent = grants.length ? '' : 'No grants: every gated tool call asks.';
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    }
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearAlert(formAlert);
    const body = { scope: scope.value, tool_kind: tool.value.trim(), decision: decision.value };
    body[TARGET[scope.value].key] = target.value.trim();
    if (!body.tool_kind) {
      showError(formAlert, new Error('Tool is required.'));
      tool.focus();
      return;
    }
    if (!body[TARGET[scope.value].key]) {
      showError(formAlert, new Error(`${TARGET[scope.value].label} is required for this scope.`));
      target.focus();
      return;
    }
    const minutes = expires.value.trim();
    if (minutes) {
      const n = Number(minutes);
      if (!Number.isFinite(n) || n <= 0) {
        showError(formAlert, new Error('Expires in (minutes) must be a positive number.'));
        expires.focus();
        return;
      }
      body.expires_at = new Date(Date.now() + n * 60000).toISOString();
    }
    submit.disabled = true;
    try {
      await post(paths.grants, body);
      tool.value = '';
      target.value = '';
      expires.value = '';
      await load();
    } catch (err) {
      if (!isAbort(err)) showError(formAlert, err);
    } finally {
      submit.disabled = false;
    }
  });

  load();
  focusEl(heading);
  return { unmount: () => ctrl.abort() };
}
