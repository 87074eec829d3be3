// Task Detail (#/tasks/<id>?run=<run id>): what the task asks for, its runs, and
// the chosen run followed live over its stream — the activity timeline, gates
// answered in place, steps, output, patches (revert), and the raw state behind a
// disclosure. Every frame carries the whole run, so nothing is refetched while
// it runs.

import { get, post, paths, isAbort } from '../api.js';
import { h, alertBox, showError, clearAlert, timeEl, focusEl, formatCost } from '../dom.js';
import { openRunStream } from '../run-stream.js';
import { approvalGroup } from './approvals.js';
import { diffPre } from './files.js';
import { taskTitle } from './tasks.js';
import { refreshStats } from '../stats.js';

const ACTIVE = new Set(['queued', 'running', 'awaiting_approval']);

function meta(label, value) {
  return value ? [h('dt', { text: label }), h('dd', {}, value)] : [];
}

export function mountTask(root, taskId, query = {}) {
  const ctrl = new AbortController();
  const heading = h('h1', { text: 'Task' });
  const alert = alertBox();
  const about = h('dl', { class: 'task-about' });
  const runsList = h('ul', { 'aria-label': 'Runs', class: 'run-list' });
  const status = h('p', { class: 'run-status', role: 'status', 'aria-live': 'polite' });
  const startBtn = h('button', { type: 'button', text: 'Start new run' });
  const cancelBtn = h('button', { type: 'button', class: 'danger-button', text: 'Cancel run', hidden: true });
  const retryBtn = h('button', { type: 'button', text: 'Retry run', hidden: true });
  const gates = h('section', { 'aria-label': 'Waiting for you', class: 'task-gates', hidden: true });
  const activity = h('ol', { 'aria-label': 'Activity', class: 'activity-list' });
  const stepsBody = h('tbody');
  const steps = h('table', { 'aria-label': 'Steps', class: 'steps' },
    h('thead', {}, h('tr', {}, ['#', 'Kind', 'Status', 'Exit code', 'Started', 'Finished'].map((t) => h('th', { scope: 'col', text: t })))),
    stepsBody);
  const output = h('div', { class: 'task-output' });
  const raw = h('pre', { class: 'raw' });
  root.replaceChildren(
    h('p', {}, h('a', { href: '#/tasks', text: '← Tasks' })),
    heading, alert, about,
    h('h2', { text: 'Runs' }), runsList,
    h('div', { class: 'toolbar' }, startBtn, cancelBtn, retryBtn),
    status, gates,
    h('h2', { text: 'Activity' }), activity,
    h('h2', { text: 'Steps' }), steps,
    h('h2', { text: 'Output' }), output,
    h('details', { class: 'raw-details' }, h('summary', { text: 'Raw run state' }), raw));

  let task = null;
  let runs = [];
  let current = query.run || null;
  let stream = null;
  let frame = null;

  function renderRuns() {
    runsList.replaceChildren(...runs.slice().reverse().map((r) => {
      const link = h('a', {
        href: `#/tasks/${encodeURIComponent(taskId)}?run=${encodeURIComponent(r.id)}`,
        text: `Run ${r.number}`,
        dataset: { runId: r.id },
      });
      if (r.id === current) link.setAttribute('aria-current', 'true');
      return h('li', {}, link, ' ', h('span', { class: `badge status-${r.status}`, text: r.status }),
        ' ', timeEl(r.created_at));
    }));
  }

  function renderButtons(run) {
    const latest = runs[runs.length - 1];
    startBtn.hidden = Boolean(latest && ACTIVE.has(latest.status));
    cancelBtn.hidden = !(run && ACTIVE.has(run.status));
    retryBtn.hidden = !(run && (run.status === 'failed' || run.status === 'cancelled'));
  }

  function activityRow(item) {
    const li = h('li', { class: `activity activity-${item.type}`, dataset: { type: item.type, status: item.status } },
      h('span', { class: 'activity-type', text: item.type.replace(/_/g, ' ') }),
      h('strong', { class: 'activity-title', text: item.title }),
      h('span', { class: `badge status-${item.status}`, text: item.status }),
      item.needs_action ? h('span', { class: 'badge needs-action', text: 'needs action' }) : null,
      item.detail ? h('p', { class: 'activity-detail', text: item.detail }) : null,
      Array.isArray(item.paths) && item.paths.length && item.type !== 'patch'
        ? h('ul', { class: 'paths' }, item.paths.map((p) => h('li', {}, h('code', { text: p })))) : null);
    if (item.type === 'patch' && item.artifact_id) {
      const path = (item.paths || [])[0] || 'patch';
      const runId = frame.run.id;
      const slot = h('div', {});
      const show = h('button', { type: 'button', text: `Show diff of ${path}`, 'aria-expanded': 'false' });
      show.addEventListener('click', async () => {
        if (slot.firstChild) {
          slot.replaceChildren();
          show.setAttribute('aria-expanded', 'false');
          return;
        }
        try {
          const patch = (await get(paths.patch(taskId, runId, item.artifact_id))).data;
          slot.replaceChildren(diffPre(patch.path, patch.diff));
          show.setAttribute('aria-expanded', 'true');
        } catch (err) {
          if (!isAbort(err)) showError(alert, err);
        }
      });
      li.append(show);
      // Applied: revert it; reverted: apply it again. Either is an event of the
      // run, so the run is read again.
      const action = item.status === 'applied' ? 'revert' : item.status === 'reverted' ? 'apply' : null;
      if (action) {
        const button = h('button', { type: 'button', text: `${action === 'revert' ? 'Revert' : 'Apply again'} ${path}` });
        button.addEventListener('click', async () => {
          button.disabled = true;
          clearAlert(alert);
          try {
            await post(paths.patchAction(taskId, runId, item.artifact_id, action), {});
            follow(runId);
          } catch (err) {
            button.disabled = false;
            if (!isAbort(err)) showError(alert, err);
          }
        });
        li.append(button);
      }
      li.append(slot);
    }
    return li;
  }

  function render(data) {
    frame = data;
    const run = data.run;
    const i = runs.findIndex((r) => r.id === run.id);
    if (i >= 0) runs[i] = run;
    renderRuns();
    renderButtons(run);
    const cost = formatCost(run.total_cost_micros_usd);
    status.textContent = `Run ${run.number}: ${run.status}${run.error_message ? ` — ${run.error_message}` : ''}${cost && run.total_cost_micros_usd ? ` · ${cost}` : ''}`;
    status.dataset.status = run.status;

    const pending = (data.approvals || []).filter((a) => a.status === 'pending');
    gates.hidden = pending.length === 0;
    const shownGates = new Set([...gates.querySelectorAll('[data-approval-id]')].map((el) => el.dataset.approvalId));
    if (pending.length === 0) gates.replaceChildren();
    else if (pending.some((a) => !shownGates.has(a.id)) || shownGates.size !== pending.length) {
      gates.replaceChildren(h('h2', { text: 'Waiting for you' }), ...pending.map((a) => h('div', {},
        h('p', { class: 'gate-reason', text: a.reason }),
        approvalGroup({ approval_id: a.id, kind: 'task', task_id: a.task_id, tool_name: a.reason.split('\n')[0], tool_kind: a.kind, created_at: a.created_at }))));
    }

    activity.replaceChildren(...(data.activity || []).map(activityRow));
    if (!(data.activity || []).length) activity.append(h('li', { class: 'hint', text: 'Nothing yet.' }));

    stepsBody.replaceChildren(...(data.steps || []).map((s) => h('tr', { dataset: { status: s.status } },
      h('td', { text: String(s.index) }), h('td', { text: s.kind }),
      h('td', {}, h('span', { class: `badge status-${s.status}`, text: s.status })),
      h('td', { text: s.exit_code === null || s.exit_code === undefined ? '' : String(s.exit_code) }),
      h('td', {}, timeEl(s.started_at)), h('td', {}, s.finished_at ? timeEl(s.finished_at) : ''))));

    output.replaceChildren(...(data.artifacts || []).filter((a) => a.kind === 'stdout' || a.kind === 'stderr').map((a) => h('details', { open: true, class: 'artifact' },
      h('summary', { text: `${a.kind} (${a.size_bytes} bytes${a.truncated ? ', preview' : ''})` }),
      h('pre', { class: 'artifact-content', 'aria-label': a.kind, text: a.content }))));
    if (!output.children.length) output.append(h('p', { class: 'hint', text: 'No output captured.' }));
    raw.textContent = JSON.stringify(data, null, 2);
  }

  function follow(runId) {
    if (stream) stream.close();
    current = runId;
    renderRuns();
    stream = openRunStream(taskId, runId, {
      onFrame: render,
      onEnd: () => {
        refreshStats();
      },
      onGone: () => showError(alert, new Error(`Run ${runId} no longer exists.`)),
    });
  }

  async function load() {
    try {
      task = (await get(paths.task(taskId), { signal: ctrl.signal })).data;
      runs = (await get(paths.taskRuns(taskId), { signal: ctrl.signal })).data || [];
    } catch (err) {
      if (isAbort(err)) return;
      heading.textContent = 'Task not found';
      showError(alert, err);
      return;
    }
    heading.textContent = taskTitle(task);
    document.title = `${heading.textContent} · Hecate`;
    about.replaceChildren(
      ...meta('Id', h('code', { text: task.id })),
      ...meta('Kind', task.execution_kind),
      ...meta('Working directory', task.working_directory ? h('code', { text: task.working_directory }) : null),
      ...meta('Model', [task.requested_provider, task.requested_model].filter(Boolean).join('/')),
      ...meta('Created', timeEl(task.created_at)),
      ...meta('Chat', task.session_id ? h('a', { href: `#/chats/${encodeURIComponent(task.session_id)}`, text: 'Open the chat' }) : null));
    if (task.execution_kind === 'agent_loop' && task.prompt) about.append(...meta('Prompt', h('p', { class: 'prompt', text: task.prompt })));
    if (task.execution_kind === 'shell') about.append(...meta('Command', h('code', { text: task.shell_command })));
    const latest = runs[runs.length - 1];
    if (!current || !runs.some((r) => r.id === current)) current = latest ? latest.id : null;
    renderRuns();
    renderButtons(runs.find((r) => r.id === current));
    if (current) follow(current);
    else status.textContent = 'Not started yet.';
  }

  async function act(button, make) {
    clearAlert(alert);
    button.disabled = true;
    try {
      const run = (await make()).data;
      if (run && run.id) {
        if (!runs.some((r) => r.id === run.id)) runs.push(run);
        history.replaceState(null, '', `#/tasks/${encodeURIComponent(taskId)}?run=${encodeURIComponent(run.id)}`);
        follow(run.id);
      }
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    } finally {
      button.disabled = false;
    }
  }

  startBtn.addEventListener('click', () => act(startBtn, () => post(paths.taskStart(taskId), {})));
  cancelBtn.addEventListener('click', () => act(cancelBtn, () => post(paths.runAction(taskId, current, 'cancel'), {})));
  retryBtn.addEventListener('click', () => act(retryBtn, () => post(paths.runAction(taskId, current, 'retry'), {})));

  load();
  focusEl(heading);
  return {
    unmount: () => {
      ctrl.abort();
      if (stream) stream.close();
    },
  };
}
