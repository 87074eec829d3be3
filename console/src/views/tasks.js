// The tasks page (#/tasks?status=…&execution_kind=…&working_directory=…): the
// durable tasks newest first, filtered by the newest run's status, the kind and
// the directory (kept in the address, so a link reproduces the view), paged with
// the API's `before` cursor; the "New task" form (task-form.js); and a live
// tail of the events feed.

import { get, paths, isAbort } from '../api.js';
import { taskForm } from './task-form.js';
import { eventsTail } from './events-tail.js';
import { h, alertBox, showError, clearAlert, field, timeEl, focusEl } from '../dom.js';

const PAGE = 50;
const STATUSES = ['queued', 'running', 'awaiting_approval', 'completed', 'failed', 'cancelled'];
const KINDS = { shell: 'Shell', git: 'Git', file: 'File', agent_loop: 'Hecate agent' };

/** What a task is, in one line. */
export function taskTitle(t) {
  const text = t.execution_kind === 'agent_loop' ? t.prompt
    : t.execution_kind === 'shell' ? t.shell_command
      : t.execution_kind === 'git' ? `git ${t.git_command}`
        : t.execution_kind === 'file' ? `${t.file_operation} ${t.file_path}` : t.prompt;
  const line = (text || t.id).split('\n')[0];
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

function select(options, value) {
  const el = h('select', {}, options.map(([v, label]) => h('option', { value: v, text: label })));
  el.value = value || '';
  return el;
}

export function mountTasks(root, query = {}) {
  const ctrl = new AbortController();
  const heading = h('h1', { text: 'Tasks' });
  const alert = alertBox();
  const status = select([['', 'Any status'], ...STATUSES.map((s) => [s, s])], query.status);
  const kind = select([['', 'Any kind'], ...Object.entries(KINDS)], query.execution_kind);
  const dir = h('input', { type: 'text', value: query.working_directory || '', placeholder: '/absolute/path' });
  const apply = h('button', { type: 'submit', text: 'Apply' });
  const filters = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter tasks' },
    field('Status', status), field('Kind', kind), field('Working directory', dir), apply);
  const list = h('ul', { 'aria-label': 'Tasks', class: 'session-list' });
  const note = h('p', { class: 'hint', 'aria-live': 'polite' });
  const older = h('button', { type: 'button', text: 'Older tasks', hidden: true });
  const form = taskForm((task) => { location.hash = `#/tasks/${encodeURIComponent(task.id)}`; });
  const tail = eventsTail();
  root.replaceChildren(heading,
    h('details', { class: 'new-task' }, h('summary', { text: 'New task' }), form),
    filters, alert, note, list, h('div', { class: 'toolbar' }, older), tail.element);

  let shown = 0;
  let cursor = null;

  function row(t) {
    const st = t.latest_run_status || 'not started';
    return h('li', { class: 'session' },
      h('a', { href: `#/tasks/${encodeURIComponent(t.id)}`, dataset: { taskId: t.id }, text: taskTitle(t) }),
      h('div', { class: 'session-meta' },
        h('span', { class: 'target', text: KINDS[t.execution_kind] || t.execution_kind }),
        h('span', { class: `badge status-${st.replace(/ /g, '_')}`, text: st }),
        t.working_directory ? h('span', {}, h('code', { text: t.working_directory })) : null,
        h('span', {}, 'created ', timeEl(t.created_at))));
  }

  async function load(more) {
    clearAlert(alert);
    try {
      const res = await get(paths.tasks, {
        query: {
          limit: PAGE,
          status: status.value,
          execution_kind: kind.value,
          working_directory: dir.value.trim(),
          before: more ? cursor : undefined,
        },
        signal: ctrl.signal,
      });
      const tasks = (res && res.data) || [];
      if (!more) {
        list.replaceChildren();
        shown = 0;
      }
      for (const t of tasks) list.append(row(t));
      shown += tasks.length;
      cursor = tasks.length ? tasks[tasks.length - 1].id : cursor;
      older.hidden = tasks.length < PAGE;
      const filtered = status.value || kind.value || dir.value.trim();
      note.textContent = shown === 0 ? (filtered ? 'No task matches the filters.' : 'No tasks yet.') : `${shown} task(s)`;
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    }
  }

  filters.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    if (status.value) q.set('status', status.value);
    if (kind.value) q.set('execution_kind', kind.value);
    if (dir.value.trim()) q.set('working_directory', dir.value.trim());
    const hash = `#/tasks${q.toString() ? `?${q}` : ''}`;
    if (location.hash === hash) load(false);
    else location.hash = hash;
  });
  older.addEventListener('click', () => load(true));
  load(false);
  focusEl(heading);
  return {
    unmount: () => {
      ctrl.abort();
      tail.stop();
    },
  };
}
