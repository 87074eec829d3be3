// The "New task" form of the Tasks page: every execution kind (shell, git, file,
// Hecate's agent) and profile, the workspace mode (in place, or a clone of a
// repository), the sandbox, limits (budget, turns, step time, priority), the
// MCP servers an agent run may use with a probe of each, and whether to start
// it now. The API's refusal (a 400 naming the field) shows in the form.

import { post, paths, isAbort } from '../api.js';
import { h, alertBox, showError, showMessage, clearAlert, field, uid } from '../dom.js';
import { loadModels } from '../targets.js';

function choice(options, value) {
  const el = h('select', {}, options.map(([v, label]) => h('option', { value: v, text: label })));
  el.value = value;
  return el;
}

function checkbox(label, checked, hint) {
  const box = h('input', { type: 'checkbox', checked, id: uid('cb') });
  const wrap = h('div', { class: 'field checkbox' }, box, h('label', { for: box.id, text: label }));
  if (hint) wrap.append(h('span', { class: 'hint', text: hint }));
  return { box, wrap };
}

/** The MCP server entries of the textarea: a JSON array of entries (the shape
 * of a task's `mcp_servers` item), or `null` when it is empty. Throws on bad JSON. */
function mcpEntries(text) {
  const t = text.trim();
  if (!t) return null;
  const v = JSON.parse(t);
  if (!Array.isArray(v)) throw new Error('MCP servers must be a JSON array of server entries.');
  return v;
}

/** The form; `onCreated(task)` runs after the task was created (and started). */
export function taskForm(onCreated) {
  const alert = alertBox();
  const kind = choice([['shell', 'Shell command'], ['git', 'Git'], ['file', 'File'], ['agent_loop', 'Hecate agent']], 'shell');
  const profile = choice([['', 'None'], ['repo_local', 'Repository, in place'], ['coding_agent', 'Coding agent']], '');
  const command = h('textarea', { rows: 2 });
  const git = h('input', { type: 'text', autocomplete: 'off', placeholder: 'status --short' });
  const filePath = h('input', { type: 'text', autocomplete: 'off', placeholder: 'notes.txt' });
  const fileOp = choice([['write', 'Write'], ['append', 'Append'], ['delete', 'Delete']], 'write');
  const fileContent = h('textarea', { rows: 3 });
  const prompt = h('textarea', { rows: 3 });
  const model = h('select', {}, h('option', { value: '', text: 'Default model' }));
  const mode = choice([['in_place', 'In place (the directory itself)'], ['ephemeral', 'Ephemeral clone'], ['persistent', 'Persistent clone']], 'in_place');
  const dir = h('input', { type: 'text', autocomplete: 'off', placeholder: '/absolute/path' });
  const repo = h('input', { type: 'text', autocomplete: 'off', placeholder: '/path/to/repo or URL' });
  const branch = h('input', { type: 'text', autocomplete: 'off', placeholder: 'main' });
  const readOnly = checkbox('Read-only outside the workspace', true, 'Off: the whole filesystem is writable.');
  const network = checkbox('Network access', false);
  const gitWritable = checkbox('.git writable (and git hooks on)', false);
  const budget = h('input', { type: 'number', step: '0.01', placeholder: '0 = none' });
  const turns = h('input', { type: 'number', min: 1, max: 1000, placeholder: '20' });
  const timeout = h('input', { type: 'number', min: 1, placeholder: '120' });
  const priority = h('input', { type: 'number', placeholder: '0' });
  const mcp = h('textarea', { rows: 3, placeholder: '[{"name": "fs", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}]' });
  const probe = h('button', { type: 'button', text: 'Probe MCP servers' });
  const probed = h('ul', { 'aria-label': 'MCP probe results', class: 'paths' });
  const start = checkbox('Start it now', true);
  const submit = h('button', { type: 'submit', class: 'primary', text: 'Create task' });

  const fields = {
    command: field('Command', command),
    git: field('Git arguments', git),
    filePath: field('File', filePath, 'Relative to the workspace.'),
    fileOp: field('Operation', fileOp),
    fileContent: field('Content', fileContent),
    prompt: field('Prompt', prompt),
    model: field('Model', model),
    dir: field('Working directory', dir, 'Absolute; the task reads and writes only under it.'),
    repo: field('Repository', repo),
    branch: field('Branch', branch),
    turns: field('Most model turns', turns),
    mcp: field('MCP servers (JSON)', mcp, 'Entries an agent run may use; Probe lists each one\'s tools.'),
  };
  const form = h('form', { class: 'task-form', 'aria-label': 'New task' },
    field('Kind', kind), field('Profile', profile, 'Defaults applied before the fields below.'),
    fields.command, fields.git, fields.filePath, fields.fileOp, fields.fileContent, fields.prompt, fields.model,
    field('Workspace', mode), fields.dir, fields.repo, fields.branch,
    h('fieldset', {}, h('legend', { text: 'Sandbox' }), readOnly.wrap, network.wrap, gitWritable.wrap),
    h('fieldset', {}, h('legend', { text: 'Limits' }),
      field('Budget (USD)', budget), fields.turns, field('Step time limit (s)', timeout), field('Priority', priority)),
    fields.mcp, h('div', { class: 'actions' }, probe), probed,
    start.wrap, h('div', { class: 'actions' }, submit), alert);

  function sync() {
    const k = kind.value;
    fields.command.hidden = k !== 'shell';
    fields.git.hidden = k !== 'git';
    for (const f of [fields.filePath, fields.fileOp, fields.fileContent]) f.hidden = k !== 'file';
    for (const f of [fields.prompt, fields.model, fields.turns, fields.mcp]) f.hidden = k !== 'agent_loop';
    probe.hidden = k !== 'agent_loop';
    fields.fileContent.hidden = k !== 'file' || fileOp.value === 'delete';
    const clone = mode.value !== 'in_place';
    fields.repo.hidden = !clone;
    fields.branch.hidden = !clone;
  }
  for (const el of [kind, mode, fileOp]) el.addEventListener('change', sync);
  sync();

  loadModels().then((list) => {
    for (const m of list) {
      model.append(h('option', { value: m.id, text: m.ready ? m.id : `${m.id} (not ready)`, dataset: { provider: m.provider, model: m.model } }));
    }
  }).catch(() => { /* the default model still works */ });

  probe.addEventListener('click', async () => {
    clearAlert(alert);
    probed.replaceChildren();
    let entries;
    try {
      entries = mcpEntries(mcp.value) || [];
    } catch (err) {
      showMessage(alert, err.message);
      return;
    }
    probe.disabled = true;
    for (const entry of entries) {
      const li = h('li', { text: `${entry.name || 'probe'}: probing…` });
      probed.append(li);
      try {
        const res = (await post(paths.mcpProbe, entry)).data;
        li.replaceChildren(h('strong', { text: res.name }), `: ${res.tools.length} tool(s) — `, res.tools.map((t) => t.name).join(', '));
        li.dataset.ok = 'true';
      } catch (err) {
        li.textContent = `${entry.name || 'probe'}: ${(err.envelope && err.envelope.message) || err.message}`;
        li.dataset.ok = 'false';
      }
    }
    probe.disabled = false;
  });

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearAlert(alert);
    const body = { execution_kind: kind.value, workspace_mode: mode.value };
    if (profile.value) body.execution_profile = profile.value;
    switch (kind.value) {
      case 'shell': body.shell_command = command.value; break;
      case 'git': body.git_command = git.value; break;
      case 'file':
        body.file_path = filePath.value;
        body.file_operation = fileOp.value;
        if (fileOp.value !== 'delete') body.file_content = fileContent.value;
        break;
      default: {
        body.prompt = prompt.value;
        const chosen = model.selectedOptions[0];
        if (chosen && chosen.value) {
          body.requested_provider = chosen.dataset.provider;
          body.requested_model = chosen.dataset.model;
        }
        if (turns.value) body.max_turns = Number(turns.value);
        try {
          const entries = mcpEntries(mcp.value);
          if (entries) body.mcp_servers = entries;
        } catch (err) {
          showMessage(alert, err.message);
          return;
        }
      }
    }
    const d = dir.value.trim();
    if (d) {
      body.working_directory = d;
      body.sandbox_allowed_root = d;
    }
    if (mode.value !== 'in_place') {
      if (repo.value.trim()) body.repo = repo.value.trim();
      if (branch.value.trim()) body.base_branch = branch.value.trim();
    }
    body.sandbox_read_only = readOnly.box.checked;
    body.sandbox_network = network.box.checked;
    body.sandbox_git_writable = gitWritable.box.checked;
    if (budget.value !== '') body.budget_micros_usd = Math.round(Number(budget.value) * 1e6);
    if (timeout.value) body.timeout_ms = Math.round(Number(timeout.value) * 1000);
    if (priority.value) body.priority = Number(priority.value);
    submit.disabled = true;
    try {
      const task = (await post(paths.tasks, body)).data;
      if (start.box.checked) await post(paths.taskStart(task.id), {});
      onCreated(task);
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}
