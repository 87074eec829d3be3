// Approvals: the "Approval request" group (tool, Scope, Approve/Reject) used inline
// in transcripts and on the Approvals page, and the page itself (#/approvals),
// listing GET /hecate/v1/approvals?status=pending.

import { get, post, paths, isAbort } from '../api.js';
import { h, alertBox, showError, clearAlert, field, timeEl, focusEl } from '../dom.js';
import { refreshStats } from '../stats.js';

const SCOPE_LABEL = {
  once: 'Once',
  session: 'This session',
  workspace_tool: 'This tool in this workspace',
  adapter_tool: 'This tool for this agent',
};

/**
 * The "Approval request" group. `item`: {approval_id, tool_name, tool_kind,
 * scope_choices, kind ('session'|'task'), session_id, task_id, created_at,
 * expires_at}. `onDone(item)` runs after a decision was accepted (or the approval
 * was no longer pending).
 */
export function approvalGroup(item, { onDone } = {}) {
  const alert = alertBox();
  const group = h('div', { role: 'group', 'aria-label': 'Approval request', class: 'approval', dataset: { approvalId: item.approval_id } });
  const scopes = Array.isArray(item.scope_choices) ? item.scope_choices : [];
  let scopeSelect = null;
  if (scopes.length) {
    scopeSelect = h('select', {}, scopes.map((s) => h('option', { value: s, text: SCOPE_LABEL[s] || s })));
  }
  const approve = h('button', { type: 'button', class: 'primary', text: 'Approve' });
  const reject = h('button', { type: 'button', class: 'danger-button', text: 'Reject' });
  group.append(
    h('p', { class: 'approval-title' }, h('strong', { text: 'Approval requested: ' }), h('span', { class: 'tool-name', text: item.tool_name || '(unnamed tool)' })),
    h('p', { class: 'approval-meta' }, 'Kind: ', h('code', { text: item.tool_kind || 'unknown' }),
      item.created_at ? h('span', {}, ' · asked ', timeEl(item.created_at)) : null,
      item.expires_at ? h('span', {}, ' · expires ', timeEl(item.expires_at)) : null),
    scopeSelect ? field('Scope', scopeSelect) : null,
    h('div', { class: 'actions' }, approve, reject),
    alert);

  async function decide(decision) {
    clearAlert(alert);
    approve.disabled = true;
    reject.disabled = true;
    try {
      if (item.kind === 'task') {
        await post(paths.taskResolve(item.task_id, item.approval_id), { decision });
      } else {
        const body = { decision };
        if (scopeSelect) body.scope = scopeSelect.value;
        await post(paths.resolve(item.session_id, item.approval_id), body);
      }
      group.dataset.resolved = decision;
      if (onDone) onDone(item);
      refreshStats();
    } catch (err) {
      if (isAbort(err)) return;
      if (err.status === 409 || err.status === 404) {
        // Decided elsewhere (or expired): it no longer waits.
        if (onDone) onDone(item);
        refreshStats();
        return;
      }
      showError(alert, err);
      approve.disabled = false;
      reject.disabled = false;
    }
  }
  approve.addEventListener('click', () => decide('approve'));
  reject.addEventListener('click', () => decide('reject'));
  return group;
}

/** The Approvals page. */
export function mountApprovals(root) {
  const ctrl = new AbortController();
  const heading = h('h1', { text: 'Approvals' });
  const alert = alertBox();
  const list = h('ul', { 'aria-label': 'Pending approvals', class: 'approval-list' });
  const note = h('p', { class: 'hint' });
  const reload = h('button', { type: 'button', text: 'Refresh' });
  root.replaceChildren(heading, h('div', { class: 'toolbar' }, reload), alert, note, list);

  function removeItem(li) {
    li.remove();
    note.textContent = list.children.length ? '' : 'Nothing is waiting for a decision.';
  }

  async function load() {
    clearAlert(alert);
    note.textContent = 'Loading…';
    try {
      const res = await get(paths.inbox, { query: { status: 'pending' }, signal: ctrl.signal });
      const items = (res && res.data) || [];
      list.replaceChildren();
      for (const item of items) {
        const li = h('li', { class: 'approval-item' });
        const link = item.kind === 'task'
          ? h('a', { href: `#/tasks/${encodeURIComponent(item.task_id)}`, text: `Task ${item.task_id}` })
          : h('a', { href: `#/chats/${encodeURIComponent(item.session_id)}`, text: item.session_title || item.session_id });
        li.append(h('p', { class: 'approval-origin' }, item.kind === 'task' ? 'Task: ' : 'Chat: ', link),
          approvalGroup(item, { onDone: () => removeItem(li) }));
        list.append(li);
      }
      note.textContent = items.length ? '' : 'Nothing is waiting for a decision.';
    } catch (err) {
      if (isAbort(err)) return;
      note.textContent = '';
      showError(alert, err);
    }
  }
  reload.addEventListener('click', () => {
    refreshStats();
    load();
  });
  // Decisions made elsewhere show when the operator comes back to the window.
  const onFocus = () => load();
  window.addEventListener('focus', onFocus);
  load();
  focusEl(heading);
  return {
    unmount: () => {
      ctrl.abort();
      window.removeEventListener('focus', onFocus);
    },
  };
}
