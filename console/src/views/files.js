// Changed files of one assistant message: `details` "Files changed (N)" with a
// checkbox per path, "Show diff" (unified diff rendered as text with added/removed
// line classes), "Revert all" and "Revert selected", re-fetched after a revert.

import { get, post, paths, isAbort } from '../api.js';
import { h, alertBox, showError, clearAlert, uid } from '../dom.js';

/** A unified diff as a <pre data-diff-path> of line spans. */
export function diffPre(path, diff) {
  const code = h('code');
  const lines = String(diff || '').split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  for (const line of lines) {
    let cls = 'ctx';
    if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff ') || line.startsWith('index ')) cls = 'file';
    else if (line.startsWith('@@')) cls = 'hunk';
    else if (line.startsWith('+')) cls = 'add';
    else if (line.startsWith('-')) cls = 'del';
    code.append(h('span', { class: `diff-line diff-${cls}`, text: line }), '\n');
  }
  if (!lines.length) code.append(h('span', { class: 'diff-line', text: '(no textual difference)' }));
  return h('pre', { class: 'diff', dataset: { diffPath: path }, tabindex: '0', 'aria-label': `Diff of ${path}` }, code);
}

/** Builds the section for a message; answers {el, refresh}. */
export function filesSection(sessionId, messageId, { wasReverted = () => false } = {}) {
  const summary = h('summary', { text: 'Files changed' });
  const list = h('ul', { class: 'files' });
  const alert = alertBox();
  const status = h('p', { class: 'hint files-note' });
  const revertAll = h('button', { type: 'button', text: 'Revert all' });
  const revertSelected = h('button', { type: 'button', text: 'Revert selected' });
  const actions = h('div', { class: 'actions' }, revertAll, revertSelected);
  const el = h('details', { class: 'files-details', dataset: { part: 'files' } }, summary, alert, status, list, actions);
  let files = [];
  let loading = null;
  let everHad = false;

  function setCount(n) {
    summary.textContent = `Files changed (${n})`;
    el.setAttribute('aria-label', summary.textContent);
  }

  function render() {
    setCount(files.length);
    list.replaceChildren();
    for (const f of files) {
      const box = h('input', { type: 'checkbox', id: uid('file'), value: f.path });
      const label = h('label', { for: box.id, text: f.path });
      const stat = h('span', { class: 'file-stat' },
        ` ${f.status || ''} `, h('span', { class: 'diff-add', text: `+${f.additions ?? 0}` }), ' ',
        h('span', { class: 'diff-del', text: `−${f.deletions ?? 0}` }),
        f.old_path ? ` (was ${f.old_path})` : '');
      const show = h('button', { type: 'button', class: 'small', text: 'Show diff', 'aria-expanded': 'false' });
      const slot = h('div', { class: 'diff-slot' });
      show.addEventListener('click', () => toggleDiff(f.path, show, slot));
      list.append(h('li', {}, h('div', { class: 'file-row' }, box, label, stat, show), slot));
    }
    const none = files.length === 0;
    revertAll.disabled = none;
    revertSelected.disabled = none;
    if (!none) everHad = true;
    status.textContent = !none ? '' : everHad || wasReverted()
      ? 'No changed files remain for this turn.'
      : 'No Git diff was captured for this turn (the workspace is not a Git repository).';
  }

  async function toggleDiff(path, button, slot) {
    if (button.getAttribute('aria-expanded') === 'true') {
      slot.replaceChildren();
      button.setAttribute('aria-expanded', 'false');
      return;
    }
    clearAlert(alert);
    button.disabled = true;
    try {
      const res = await get(paths.fileDiff(sessionId, messageId, path));
      slot.replaceChildren(diffPre(path, res && res.data ? res.data.diff : ''));
      button.setAttribute('aria-expanded', 'true');
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    } finally {
      button.disabled = false;
    }
  }

  async function load() {
    try {
      const res = await get(paths.files(sessionId, messageId));
      files = (res && res.data) || [];
      render();
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    }
  }

  function refresh() {
    loading = load();
    return loading;
  }

  async function revert(selectedOnly) {
    clearAlert(alert);
    const chosen = [...list.querySelectorAll('input[type=checkbox]:checked')].map((b) => b.value);
    if (selectedOnly && chosen.length === 0) {
      showError(alert, new Error('Select at least one file to revert.'));
      return;
    }
    revertAll.disabled = true;
    revertSelected.disabled = true;
    try {
      const res = await post(paths.revert(sessionId, messageId), { paths: selectedOnly ? chosen : [] });
      const d = (res && res.data) || {};
      await load();
      status.textContent = d.reverted
        ? `Reverted ${(d.paths || []).length} file(s).${files.length ? '' : ' No changed files remain for this turn.'}`
        : 'Nothing was reverted.';
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
      render();
    }
  }

  revertAll.addEventListener('click', () => revert(false));
  revertSelected.addEventListener('click', () => revert(true));
  setCount(0);
  refresh();
  return { el, refresh };
}
