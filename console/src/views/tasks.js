// The tasks page (#/tasks?status=…&execution_kind=…&working_directory=…): the
// durable tasks newest first, filtered by the newest run's status, the kind and
// the directory (kept in the address, so a link reproduces the view), paged with
// the API's `before` cursor; and a form that creates a shell or Hecate-agent task
// and starts it.

import { get, post, paths, isAbort } from '../api.js';
import { loadModels } from '../targets.js';
import { eventsTail } from './events-tail.js';
import { h, alertBox, showError, clearAlert, field, timeEl, focusEl, uid } from '../dom.js';

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

/** The create form: a shell command or a prompt for Hecate's agent, a
 * directory, and (for the agent) a model. */
function createForm(onCreated) {
  const alert = alertBox();
  const kind = select([['shell', 'Shell command'], ['agent_loop', 'Hecate agent']], 'shell');
  const command = h('textarea', { rows: 2 });
  const prompt = h('textarea', { rows: 3 });
  const dir = h('input', { type: 'text', autocomplete: 'off', placeholder: '/absolute/path' });
  const model = h('select', {}, h('option', { value: '', text: 'Default model' }));
  const start = h('input', { type: 'checkbox', checked: true, id: uid('start') });
  const submit = h('button', { type: 'submit', class: 'primary', text: 'Create task' });
  const commandField = field('Command', command);
  const promptField = field('Prompt', prompt);
  const modelField = field('Model', model);
  const form = h('form', { class: 'task-form', 'aria-label': 'New task' },
    field('Kind', kind), commandField, promptField,
    field('Working directory', dir, 'Absolute; the task reads and writes only under it.'),
    modelField,
    h('div', { class: 'field checkbox' }, start, h('label', { for: start.id, text: 'Start it now' })),
    h('div', { class: 'actions' }, submit), alert);

  function sync() {
    const agent = kind.value === 'agent_loop';
    commandField.hidden = agent;
    promptField.hidden = !agent;
    modelField.hidden = !agent;
  }
  kind.addEventListener('change', sync);
  sync();

  loadModels().then((list) => {
    for (const m of list) {
      model.append(h('option', { value: m.id, text: m.ready ? m.id : `${m.id} (not ready)`, dataset: { provider: m.provider, model: m.model } }));
    }
  }).catch(() => { /* the default model still works */ });

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearAlert(alert);
    const body = { execution_kind: kind.value };
    if (kind.value === 'shell') body.shell_command = command.value;
    else {
      body.prompt = prompt.value;
      const chosen = model.selectedOptions[0];
      if (chosen && chosen.value) {
        body.requested_provider = chosen.dataset.provider;
        body.requested_model = chosen.dataset.model;
      }
    }
    if (dir.value.trim()) {
      body.working_directory = dir.value.trim();
      body.sandbox_allowed_root = dir.value.trim();
    }
    submit.disabled = true;
    try {
      const task = (await post(paths.tasks, body)).data;
      if (start.checked) await post(paths.taskStart(task.id), {});
      onCreated(task);
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
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
  const form = createForm((task) => { location.hash = `#/tasks/${encodeURIComponent(task.id)}`; });
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
