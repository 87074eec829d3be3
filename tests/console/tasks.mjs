// The tasks pages' browser scenarios: a shell task created from the page, gated,
// approved in Task Detail and finished with its step and output arriving over
// the run's stream (no refetch); a file task's patch reverted from the page;
// the list's filters kept in the address and its paging over 1,000 tasks.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BASE, WS, WAIT, figures, api, openPage, shot } from './harness.mjs';

const activity = (page) => page.getByRole('list', { name: 'Activity' });

/** Polls the API until the run is over (a hang guard, not a timing assertion). */
async function runEnded(task, run) {
  for (let i = 0; i < 400; i += 1) {
    const r = await api(`/hecate/v1/tasks/${task}/runs/${run}`);
    if (['completed', 'failed', 'cancelled'].includes(r.body.data.status)) return r.body.data;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`run ${run} did not end`);
}

export const scenarios = {
  async 'the live events tail on the tasks page shows an event as soon as it is stored'() {
    const created = await api('/hecate/v1/tasks', { method: 'POST', body: JSON.stringify({ execution_kind: 'shell', shell_command: 'true', working_directory: WS, sandbox_allowed_root: WS }) });
    const task = created.body.data.id;
    const run = (await api(`/hecate/v1/tasks/${task}/start`, { method: 'POST', body: '{}' })).body.data.id;
    const { context, page, errors } = await openPage();
    await page.goto(BASE + '/#/tasks');
    const log = page.getByRole('log', { name: 'Live events' });
    await log.locator('li').first().waitFor({ timeout: WAIT });
    await page.getByText('Following.').waitFor();
    await page.evaluate(() => {
      window.__seen = null;
      new MutationObserver(() => {
        if (!window.__seen && document.querySelector('[aria-label="Live events"] li[data-type="console.tail"]')) window.__seen = Date.now();
      }).observe(document.querySelector('[aria-label="Live events"]'), { childList: true });
    });
    const samples = [];
    for (let i = 0; i < 5; i += 1) {
      await page.evaluate(() => { window.__seen = null; document.querySelectorAll('[aria-label="Live events"] li[data-type="console.tail"]').forEach((e) => e.remove()); });
      const sent = Date.now();
      const appended = await api(`/hecate/v1/tasks/${task}/runs/${run}/events`, { method: 'POST', body: JSON.stringify({ events: [{ type: 'console.tail', data: { i } }] }) });
      assert.equal(appended.status, 201, JSON.stringify(appended.body));
      await page.waitForFunction(() => window.__seen !== null, null, { timeout: WAIT });
      samples.push((await page.evaluate(() => window.__seen)) - sent);
    }
    samples.sort((a, b) => a - b);
    figures.events_tail_ms = { median: samples[2], max: samples[4] };
    const row = log.locator('li[data-type="console.tail"]').first();
    assert.match(await row.textContent(), new RegExp(task));
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'a shell task is created, approved in Task Detail and finishes live'() {
    const { context, page, errors } = await openPage();
    await page.goto(BASE + '/#/tasks');
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    await page.getByText('New task', { exact: true }).click();
    const form = page.getByRole('form', { name: 'New task' });
    await form.getByLabel('Kind').selectOption('shell');
    await form.getByLabel('Command').fill('echo from-the-console');
    await form.getByLabel('Working directory').fill(WS);
    await form.getByRole('button', { name: 'Create task' }).click();
    await page.waitForURL(/#\/tasks\/task_/);
    const taskId = decodeURIComponent(page.url().split('#/tasks/')[1].split('?')[0]);
    await page.getByRole('heading', { name: 'echo from-the-console' }).waitFor();

    // The gate shows in the page, from the stream, with the timeline row asking for action.
    const gates = page.getByRole('region', { name: 'Waiting for you' });
    await gates.getByRole('group', { name: 'Approval request' }).waitFor({ timeout: WAIT });
    await activity(page).locator('li[data-type=approval][data-status=pending]').waitFor();
    assert.match(await activity(page).locator('li[data-type=approval]').textContent(), /needs action/);
    assert.match(await page.getByRole('status').textContent(), /awaiting_approval/);
    await shot(page, 'task-gated');

    // Approve in place; from here on only the open stream may bring the run's state.
    const after = [];
    page.on('request', (r) => after.push(`${r.method()} ${new URL(r.url()).pathname}`));
    await gates.getByRole('button', { name: 'Approve' }).click();
    await page.locator('.run-status[data-status=completed]').waitFor({ timeout: WAIT });
    const steps = page.getByRole('table', { name: 'Steps' });
    assert.match(await steps.locator('tbody tr').first().textContent(), /shell.*completed.*0/);
    assert.match(await page.locator('pre[aria-label=stdout]').textContent(), /from-the-console/);
    const rows = await activity(page).locator('li').evaluateAll((els) => els.map((e) => `${e.dataset.type}:${e.dataset.status}`));
    assert.deepEqual(rows, ['approval:approved', 'tool_call:completed', 'run_result:completed']);
    assert.ok(await gates.isHidden(), 'nothing waits any more');
    const refetched = after.filter((r) => /\/tasks\/[^/]+\/(runs|steps|artifacts|approvals)/.test(r) && !r.endsWith('/resolve'));
    assert.deepEqual(refetched, [], `the state came with the stream frames: ${after.join(', ')}`);

    const run = (await api(`/hecate/v1/tasks/${taskId}/runs`)).body.data.at(-1);
    assert.equal(run.status, 'completed');
    await shot(page, 'task-detail');
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'a Hecate agent chat links to its task, and Task Detail links back to the chat'() {
    const created = await api('/hecate/v1/agent-chat/sessions', { method: 'POST', body: JSON.stringify({ runtime_kind: 'agent', model: 'fix/fixture-model', workspace: WS, title: 'Agent round trip' }) });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.data.id;
    const said = await api(`/hecate/v1/agent-chat/sessions/${id}/messages`, { method: 'POST', body: JSON.stringify({ content: 'hello agent' }) });
    assert.equal(said.status, 200, JSON.stringify(said.body));
    const { context, page, errors } = await openPage();
    await page.goto(`${BASE}/#/chats/${id}`);
    const link = page.getByRole('link', { name: /^Backing task task_/ });
    await link.waitFor({ timeout: WAIT });
    await link.click();
    await page.waitForURL(/#\/tasks\/task_/);
    await page.locator('.run-status[data-status=completed]').waitFor({ timeout: WAIT });
    await page.getByRole('link', { name: 'Open the chat' }).click();
    await page.waitForURL(new RegExp(`#/chats/${id}$`));
    await page.getByRole('heading', { name: 'Agent round trip' }).waitFor({ timeout: WAIT });
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'the New task form sends every field, probes MCP servers, and shows a refusal by field'() {
    const { context, page, errors } = await openPage([/status of 400/]);
    await page.goto(BASE + '/#/tasks');
    await page.getByText('New task', { exact: true }).click();
    const form = page.getByRole('form', { name: 'New task' });
    await form.getByLabel('Kind').selectOption('agent_loop');
    await form.getByLabel('Profile').selectOption('coding_agent');
    await form.getByLabel('Prompt').fill('tidy the notes');
    await form.getByLabel('Working directory').fill(WS);
    await form.getByLabel('Network access').check();
    await form.getByLabel('Most model turns').fill('7');
    await form.getByLabel('Step time limit (s)').fill('30');
    const entry = { name: 'fx', command: process.env.HECATE_FIXTURES, args: ['mcp-server'] };
    await form.getByLabel('MCP servers (JSON)').fill(JSON.stringify([entry]));
    await form.getByRole('button', { name: 'Probe MCP servers' }).click();
    const probed = form.getByRole('list', { name: 'MCP probe results' }).locator('li[data-ok=true]');
    await probed.waitFor({ timeout: WAIT });
    assert.match(await probed.textContent(), /fx: \d+ tool\(s\).*echo/);
    await form.getByLabel('Start it now').uncheck();

    // A negative budget is refused by the API, named, and nothing is created.
    const before = (await api('/hecate/v1/tasks?limit=1000')).body.data.length;
    await form.getByLabel('Budget (USD)').fill('-1');
    await form.getByRole('button', { name: 'Create task' }).click();
    const refusal = form.getByRole('alert');
    await refusal.waitFor({ timeout: WAIT });
    assert.match(await refusal.textContent(), /budget_micros_usd/);
    assert.equal((await api('/hecate/v1/tasks?limit=1000')).body.data.length, before);

    await form.getByLabel('Budget (USD)').fill('0.25');
    await form.getByRole('button', { name: 'Create task' }).click();
    await page.waitForURL(/#\/tasks\/task_/);
    const id = decodeURIComponent(page.url().split('#/tasks/')[1].split('?')[0]);
    const task = (await api(`/hecate/v1/tasks/${id}`)).body.data;
    assert.equal(task.execution_kind, 'agent_loop');
    assert.equal(task.max_turns, 7);
    assert.equal(task.timeout_ms, 30000);
    assert.equal(task.budget_micros_usd, 250000);
    assert.equal(task.sandbox_network, true);
    assert.equal(task.working_directory, WS);
    assert.equal(task.mcp_servers[0].name, 'fx');
    assert.match(task.profile_prompt, /coding agent/, 'the profile applied (its own layer of the system prompt)');
    assert.equal(task.system_prompt, '', 'the task adds no layer of its own');
    assert.equal(task.latest_run_id, null, 'not started');
    await page.getByText('Not started yet.').waitFor();
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'a patch a file task applied is reverted from Task Detail'() {
    const path = join(WS, 'patched.txt');
    writeFileSync(path, 'before\n');
    const created = await api('/hecate/v1/tasks', {
      method: 'POST',
      body: JSON.stringify({ execution_kind: 'file', file_path: 'patched.txt', file_content: 'after\n', workspace_mode: 'in_place', working_directory: WS, sandbox_allowed_root: WS }),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const task = created.body.data.id;
    const started = await api(`/hecate/v1/tasks/${task}/start`, { method: 'POST', body: '{}' });
    const gate = (await api(`/hecate/v1/tasks/${task}/approvals`)).body.data.find((a) => a.status === 'pending');
    if (gate) await api(`/hecate/v1/tasks/${task}/approvals/${gate.id}/resolve`, { method: 'POST', body: JSON.stringify({ decision: 'approve' }) });
    await runEnded(task, started.body.data.id);
    assert.equal(readFileSync(path, 'utf8'), 'after\n');

    const { context, page, errors } = await openPage();
    await page.goto(`${BASE}/#/tasks/${task}`);
    const patch = activity(page).locator('li[data-type=patch]');
    await page.locator('li[data-type=patch][data-status=applied]').waitFor({ timeout: WAIT });
    await patch.getByRole('button', { name: 'Show diff of patched.txt' }).click();
    const diff = patch.getByRole('region', { name: 'Diff of patched.txt' }).or(patch.locator('pre[data-diff-path="patched.txt"]'));
    await diff.first().waitFor({ timeout: WAIT });
    assert.match(await diff.first().textContent(), /-before\n\+after/);
    await patch.getByRole('button', { name: 'Revert patched.txt' }).click();
    await page.locator('li[data-type=patch][data-status=reverted]').waitFor({ timeout: WAIT });
    assert.equal(readFileSync(path, 'utf8'), 'before\n', 'the file is back');
    assert.equal(await patch.getByRole('button', { name: 'Revert patched.txt' }).count(), 0, 'a reverted patch offers no revert');
    await patch.getByRole('button', { name: 'Apply again patched.txt' }).click();
    await page.locator('li[data-type=patch][data-status=applied]').waitFor({ timeout: WAIT });
    assert.equal(readFileSync(path, 'utf8'), 'after\n', 'applied again');
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'the tasks list pages through 1,000 tasks and keeps its filters in the address'() {
    // 1,000 tasks that never ran, made through the API in parallel batches.
    const existing = (await api('/hecate/v1/tasks?limit=1000')).body.data.length;
    for (let i = existing; i < 1000; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, 1000 - i) }, (_, j) => api('/hecate/v1/tasks', {
        method: 'POST',
        body: JSON.stringify({ execution_kind: 'shell', shell_command: `echo seeded ${i + j}`, working_directory: WS, sandbox_allowed_root: WS }),
      })));
    }
    const { context, page, errors } = await openPage();
    await page.goto(BASE + '/#/tasks');
    const list = page.getByRole('list', { name: 'Tasks' });
    await list.locator('li').first().waitFor({ timeout: WAIT });
    figures.tasks_first_render_ms = await page.evaluate(() => Math.round(performance.now()));
    assert.equal(await list.locator('li').count(), 50, 'one page at a time');
    await page.getByRole('button', { name: 'Older tasks' }).click();
    await list.locator('li').nth(99).waitFor();
    const ids = await list.locator('a[data-task-id]').evaluateAll((els) => els.map((e) => e.dataset.taskId));
    assert.equal(new Set(ids).size, 100, 'the second page follows the first without repeats');

    const filters = page.getByRole('search', { name: 'Filter tasks' });
    await filters.getByLabel('Status').selectOption('completed');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/#\/tasks\?status=completed/);
    const completed = (await api('/hecate/v1/tasks?status=completed&limit=1000')).body.data.length;
    // The filtered page replaces the unfiltered one: wait for its note, which
    // counts what it shows (the old note matched the same words).
    const note = completed ? `${Math.min(completed, 50)} task(s)` : 'No task matches the filters.';
    await page.getByText(note, { exact: true }).waitFor({ timeout: WAIT });
    const shown = await list.locator('li').count();
    assert.equal(shown, Math.min(completed, 50));
    // The address alone reproduces the view.
    await page.goto(`${BASE}/#/tasks?status=completed`);
    await page.getByText(/task\(s\)|No task matches/).waitFor();
    assert.equal(await page.getByRole('search', { name: 'Filter tasks' }).getByLabel('Status').inputValue(), 'completed');
    await shot(page, 'tasks');
    assert.deepEqual(errors, []);
    await context.close();
  },
};
