// The chat pages' browser scenarios (part 1 of the console): streaming, markup
// shown as text, readiness, approvals, the queue, reloads, hand-offs, grants, the
// token dialog, the keyboard, page weight, long transcripts and idleness.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { BASE, GUARDED, TOKEN, WS, WAIT, figures, api, sessionCount, openPage, shot } from './harness.mjs';

/** Starts a chat from #/new through the form. */
async function startChat(page, { target, model, agent, title }) {
  await page.goto(BASE + '/#/new');
  await page.getByRole('heading', { name: 'New chat' }).waitFor();
  await page.getByRole('radiogroup', { name: 'Target' }).getByRole('radio', { name: target }).check();
  if (model) await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption({ value: model });
  if (agent) await page.getByRole('combobox', { name: 'Agent', exact: true }).selectOption({ value: agent });
  if (target !== 'Model') await page.getByLabel('Workspace').fill(WS);
  await page.getByLabel('Title').fill(title);
  await page.getByRole('button', { name: 'Start chat' }).click();
  await page.waitForURL(/#\/chats\/agent_chat_/);
  await page.getByRole('heading', { name: title }).waitFor();
  return decodeURIComponent(page.url().split('#/chats/')[1]);
}

async function send(page, text) {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

const transcript = (page) => page.getByRole('log', { name: 'Transcript' });
const assistants = (page, status) =>
  transcript(page).locator(`article[data-role=assistant]${status ? `[data-status=${status}]` : ''}`);

export const scenarios = {
  async 'a model chat streams its answer and shows its strip'() {
    const { context, page, errors } = await openPage();
    const before = Date.now();
    await page.goto(BASE + '/');
    await page.getByRole('list', { name: 'Sessions' }).waitFor({ state: 'attached' });
    figures.chats_first_render_ms = await page.evaluate(() => Math.round(performance.now()));
    figures.chats_wall_ms = Date.now() - before;
    const id = await startChat(page, { target: 'Model', model: 'fix/fixture-model', title: 'Streaming chat' });
    await send(page, 'please be slow');
    const live = assistants(page, 'running').first();
    await live.waitFor({ timeout: WAIT });
    const seen = new Set();
    while (await assistants(page, 'running').count()) {
      seen.add((await live.textContent().catch(() => '')) || '');
      await page.waitForTimeout(40);
    }
    const lengths = [...seen].map((t) => t.length).filter((n) => n > 0);
    assert.ok(new Set(lengths).size >= 3, `the answer grew on screen: ${[...seen].join(' | ')}`);
    const done = assistants(page, 'completed').last();
    await done.waitFor({ timeout: WAIT });
    assert.match(await done.textContent(), /w39/);
    assert.equal(await done.locator('strong').first().textContent(), 'answer', 'markdown rendered');
    const meta = await done.locator('.meta').textContent();
    assert.match(meta, /fix/);
    assert.match(meta, /fixture-model/);
    await shot(page, 'chat');
    const s = await api(`/hecate/v1/agent-chat/sessions/${id}`);
    assert.equal(s.body.data.messages.length, 2);
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'model and agent text is shown as text, never run'() {
    const { context, page, errors } = await openPage();
    await startChat(page, { target: 'Model', model: 'fix/fixture-model', title: 'Markup chat' });
    await send(page, 'show me markup <img src=y onerror="window.__xss=4">');
    const done = assistants(page, 'completed').last();
    await done.waitFor({ timeout: WAIT });
    assert.match(await done.textContent(), /<img src=x onerror/);
    assert.equal(await transcript(page).locator('img, script, iframe').count(), 0);
    assert.equal(await transcript(page).locator('a[href^="javascript"]').count(), 0);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    const res = await fetch(BASE + '/');
    const csp = res.headers.get('content-security-policy');
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'a stale model is blocked before anything is sent'() {
    const { context, page, errors } = await openPage();
    const before = await sessionCount();
    await page.goto(BASE + '/#/new');
    await page.getByRole('heading', { name: 'New chat' }).waitFor();
    await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption({ value: 'dead/ghost-model' });
    await page.getByRole('alert').filter({ hasText: /ghost-model|dead|not ready|routing/i }).first().waitFor();
    await page.getByLabel('Title').fill('Never sent');
    const start = page.getByRole('button', { name: 'Start chat' });
    assert.equal(await start.getAttribute('aria-disabled'), 'true', 'Start chat is aria-disabled');
    await start.click({ trial: false, force: true }).catch(() => {});
    // Focusable, so Enter reaches it too: still nothing is sent.
    await start.focus();
    await page.keyboard.press('Enter');
    await page.waitForTimeout(300);
    assert.match(page.url(), /#\/new/);
    assert.equal(await sessionCount(), before, 'no session was created');
    await shot(page, 'new-chat-blocked');
    // A disabled provider's model says so, in words.
    await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption({ value: 'off/off-model' });
    await page.getByRole('alert').filter({ hasText: 'its provider is disabled in the configuration' }).first().waitFor({ timeout: WAIT });
    assert.equal(await start.getAttribute('aria-disabled'), 'true', 'a disabled provider blocks too');
    // A ready model lifts the block.
    await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption({ value: 'fix/fixture-model' });
    await page.waitForFunction(() => [...document.querySelectorAll('button')].some((b) => b.textContent === 'Start chat' && b.getAttribute('aria-disabled') !== 'true'), null, { timeout: WAIT });
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'an external agent asks, is approved in the page, and its file is written, shown and reverted'() {
    const { context, page, errors } = await openPage();
    const id = await startChat(page, { target: 'External agent', agent: 'fixture', title: 'Agent chat' });
    await send(page, 'please write b');
    const ask = transcript(page).getByRole('group', { name: 'Approval request' });
    await ask.waitFor({ timeout: WAIT });
    assert.match(await ask.textContent(), /Write b\.txt/);
    await shot(page, 'approval');

    // A refresh while it waits shows the waiting state again and sends nothing.
    const messagesBefore = (await api(`/hecate/v1/agent-chat/sessions/${id}`)).body.data.messages.length;
    await page.reload();
    await transcript(page).getByRole('group', { name: 'Approval request' }).waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Stop' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Waiting for an approval.' }).waitFor();
    const messagesAfter = (await api(`/hecate/v1/agent-chat/sessions/${id}`)).body.data.messages.length;
    assert.equal(messagesAfter, messagesBefore, 'the reload sent nothing');

    await transcript(page).getByRole('group', { name: 'Approval request' }).getByRole('button', { name: 'Approve' }).click();
    const done = assistants(page, 'completed').last();
    await done.waitFor({ timeout: WAIT });
    assert.ok(existsSync(join(WS, 'b.txt')), 'the approved write happened');

    const files = done.getByRole('group', { name: /Files changed \(\d+\)/ });
    await files.waitFor({ timeout: WAIT });
    await files.locator('summary').click();
    await files.getByRole('button', { name: 'Show diff' }).first().click();
    const diff = files.locator('pre[data-diff-path="b.txt"]');
    await diff.waitFor({ timeout: WAIT });
    assert.match(await diff.textContent(), /\+new file/);
    await shot(page, 'changed-files');
    await files.getByRole('button', { name: 'Revert all' }).click();
    await page.waitForFunction(() => !document.body.textContent.includes('Files changed (1)') || document.body.textContent.includes('No changed files remain'), null, { timeout: WAIT });
    await assistants(page).last().getByText(/No changed files remain|Files changed \(0\)/).first().waitFor({ timeout: WAIT });
    assert.ok(!existsSync(join(WS, 'b.txt')), 'the revert removed the new file');

    // A rejected write ends the turn and writes nothing.
    await send(page, 'please write b again');
    await transcript(page).getByRole('group', { name: 'Approval request' }).getByRole('button', { name: 'Reject' }).click();
    await page.waitForFunction(() => document.querySelectorAll('article[data-role=assistant][data-status=completed]').length >= 2, null, { timeout: WAIT });
    assert.match(await assistants(page, 'completed').last().textContent(), /not writing/);
    assert.ok(!existsSync(join(WS, 'b.txt')), 'the rejected write did not happen');
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'the approvals inbox lists a pending approval and answers it'() {
    const { context, page, errors } = await openPage();
    const id = await startChat(page, { target: 'External agent', agent: 'fixture', title: 'Inbox chat' });
    await send(page, 'write it please');
    await transcript(page).getByRole('group', { name: 'Approval request' }).waitFor({ timeout: WAIT });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /Approvals/ }).click();
    await page.getByRole('heading', { name: 'Approvals' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /Approvals/ });
    await page.waitForFunction(() => /Approvals\s*1/.test(document.querySelector('nav').textContent), null, { timeout: WAIT });
    const item = page.getByRole('list', { name: 'Pending approvals' }).getByRole('group', { name: 'Approval request' });
    await item.waitFor({ timeout: WAIT });
    const origin = page.getByRole('list', { name: 'Pending approvals' }).getByRole('link', { name: 'Inbox chat' });
    assert.equal(await origin.getAttribute('href'), `#/chats/${encodeURIComponent(id)}`, 'the item links to its chat');
    assert.equal((await page.getByRole('navigation', { name: 'Main' }).locator('span.count').textContent()).trim(), '1');
    assert.match(await nav.textContent(), /1/);
    await shot(page, 'approvals');
    await item.getByRole('button', { name: 'Approve' }).click();
    for (let i = 0; i < 200; i += 1) {
      const s = await api(`/hecate/v1/agent-chat/sessions/${id}`);
      if (s.body.data.messages.some((m) => m.role === 'assistant' && m.status === 'completed')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const s = await api(`/hecate/v1/agent-chat/sessions/${id}`);
    assert.ok(s.body.data.messages.some((m) => m.role === 'assistant' && m.status === 'completed'), 'the turn finished');
    assert.equal((await api('/hecate/v1/approvals')).body.data.length, 0);
    assert.ok(existsSync(join(WS, 'b.txt')), 'the write approved from the inbox happened');
    // Back to the chat through the page; "Revert selected" with the path checked
    // leaves the workspace as it was for the other scenarios.
    await page.goto(`${BASE}/#/chats/${encodeURIComponent(id)}`);
    const files = assistants(page, 'completed').last().getByRole('group', { name: 'Files changed (1)' });
    await files.waitFor({ timeout: WAIT });
    await files.locator('summary').click();
    await files.getByRole('button', { name: 'Revert selected' }).click();
    await files.getByRole('alert').filter({ hasText: 'Select at least one file' }).waitFor();
    assert.ok(existsSync(join(WS, 'b.txt')), 'nothing selected, nothing reverted');
    await files.getByLabel('b.txt').check();
    await files.getByRole('button', { name: 'Revert selected' }).click();
    await assistants(page, 'completed').last().getByRole('group', { name: 'Files changed (0)' }).waitFor({ timeout: WAIT });
    await assistants(page, 'completed').last().getByText(/Reverted 1 file|No changed files remain/).waitFor({ timeout: WAIT });
    assert.ok(!existsSync(join(WS, 'b.txt')), 'Revert selected removed the new file');
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'a prompt sent while busy is queued and sent after the turn'() {
    const { context, page, errors } = await openPage();
    const id = await startChat(page, { target: 'Model', model: 'fix/fixture-model', title: 'Queue chat' });
    await send(page, 'first, slow please');
    await assistants(page, 'running').first().waitFor({ timeout: WAIT });
    // Slow too, so the queue is still there while the later entries are edited.
    await send(page, 'second prompt, slow too');
    const queue = page.getByRole('list', { name: 'Queued next' });
    await queue.getByText('second prompt').waitFor();
    const second = queue.getByRole('listitem').filter({ hasText: 'second prompt' });
    await second.getByRole('button', { name: 'Edit' }).click();
    // The editor replaces the entry's text, so it is found in the list, not the item.
    await queue.getByLabel('Queued prompt text').fill('second prompt, edited');
    await queue.getByRole('button', { name: 'Save' }).click();
    await queue.getByText('second prompt, edited').waitFor();
    await send(page, 'third prompt to remove');
    await send(page, 'fourth prompt to edit');
    const items = queue.getByRole('listitem');
    await items.filter({ hasText: 'fourth prompt' }).waitFor();
    await items.filter({ hasText: 'third prompt' }).getByRole('button', { name: 'Remove' }).click();
    await items.filter({ hasText: 'third prompt' }).waitFor({ state: 'detached' });
    // Edit, then Cancel: nothing changes.
    await items.filter({ hasText: 'second prompt' }).getByRole('button', { name: 'Edit' }).click();
    await queue.getByLabel('Queued prompt text').fill('not this');
    await queue.getByRole('button', { name: 'Cancel' }).click();
    await items.filter({ hasText: 'second prompt, edited' }).getByRole('button', { name: 'Edit' }).waitFor();
    // Edit, then Save: the entry is sent as edited.
    await items.filter({ hasText: 'fourth prompt' }).getByRole('button', { name: 'Edit' }).click();
    const editor = queue.getByLabel('Queued prompt text');
    assert.equal(await editor.inputValue(), 'fourth prompt to edit');
    await editor.fill('fourth prompt, edited');
    await queue.getByRole('button', { name: 'Save' }).click();
    await items.filter({ hasText: 'fourth prompt, edited' }).waitFor();
    assert.deepEqual(
      (await queue.locator('.queued-text').allTextContents()),
      ['second prompt, edited', 'fourth prompt, edited'],
      'the queue after Remove, Edit/Cancel and Edit/Save',
    );
    assert.equal(await assistants(page, 'running').count(), 1, 'the first turn still runs: the queue was edited while busy');
    await shot(page, 'queue');
    await page.waitForFunction(() => document.querySelectorAll('article[data-role=assistant][data-status=completed]').length >= 3, null, { timeout: WAIT });
    const want = ['first, slow please', 'second prompt, edited', 'fourth prompt, edited'];
    // The page's transcript holds the prompts in the order they were sent ...
    assert.deepEqual(
      await transcript(page).locator('article[data-role=user] .msg-body').allTextContents(),
      want, 'the transcript shows the prompts in order');
    await page.getByRole('list', { name: 'Queued next' }).waitFor({ state: 'hidden' });
    // ... and so does the server.
    const s = await api(`/hecate/v1/agent-chat/sessions/${id}`);
    const prompts = s.body.data.messages.filter((m) => m.role === 'user').map((m) => m.content);
    assert.deepEqual(prompts, want);
    assert.equal(await page.evaluate((k) => localStorage.getItem(k), `hecate.queue.${id}`), null);
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'a reload mid-turn shows the running turn again, sends nothing, and Stop ends it'() {
    const { context, page, errors } = await openPage();
    const id = await startChat(page, { target: 'Model', model: 'fix/fixture-model', title: 'Reload chat' });
    await send(page, 'slow, then reload');
    const live = assistants(page, 'running').first();
    await live.getByText(/w3\b/).waitFor({ timeout: WAIT });
    const before = (await api(`/hecate/v1/agent-chat/sessions/${id}`)).body.data.messages.map((m) => m.id);
    const requests = [];
    page.on('request', (r) => { if (r.method() !== 'GET') requests.push(`${r.method()} ${r.url()}`); });
    await page.reload();
    // The running state comes back from the API and the stream alone.
    await page.getByRole('status').filter({ hasText: 'A turn is running.' }).waitFor({ timeout: WAIT });
    await page.getByRole('button', { name: 'Stop' }).waitFor();
    const again = assistants(page, 'running').first();
    await again.waitFor({ timeout: WAIT });
    const seen = (await again.textContent()).length;
    await page.waitForFunction(([n]) => {
      const el = document.querySelector('article[data-role=assistant][data-status=running]');
      return el && el.textContent.length > n;
    }, [seen], { timeout: WAIT });
    const after = (await api(`/hecate/v1/agent-chat/sessions/${id}`)).body.data.messages.map((m) => m.id);
    assert.deepEqual(after, before, 'the reload created no message');
    assert.deepEqual(requests, [], 'the reload sent nothing but GETs');
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.waitForFunction(() => !document.querySelector('article[data-role=assistant][data-status=running]'), null, { timeout: WAIT });
    await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'hidden' });
    assert.equal(await page.getByRole('status').textContent(), '', 'the status is empty when idle');
    const s = (await api(`/hecate/v1/agent-chat/sessions/${id}`)).body.data;
    const answer = s.messages.find((m) => m.role === 'assistant');
    assert.equal(answer.status, 'cancelled');
    assert.doesNotMatch(answer.content || '', /w39/, 'Stop ended the turn before its last word');
    await assistants(page, 'cancelled').waitFor();
    assert.equal(s.messages.length, 2);
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'a hand-off the API refuses is shown, and a narrow window still fits'() {
    const { context, page, errors } = await openPage([/400|422/]);
    const id = await startChat(page, { target: 'Model', model: 'fix/fixture-model', title: 'Hand-off chat' });
    await send(page, 'hello first');
    await assistants(page, 'completed').first().waitFor({ timeout: WAIT });
    // The answer streams in before its POST returns; sent before that, the next
    // prompt would be queued, not refused.
    await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'hidden', timeout: WAIT });
    // Hecate's agent needs a workspace this model session does not have.
    await page.getByRole('combobox', { name: 'Next turn target' }).selectOption({ value: 'agent' });
    await send(page, 'now with tools');
    await page.getByRole('alert').filter({ hasText: /workspace/i }).first().waitFor({ timeout: WAIT });
    const s = await api(`/hecate/v1/agent-chat/sessions/${id}`);
    assert.equal(s.body.data.messages.length, 2, 'the refused turn stored nothing');
    await page.setViewportSize({ width: 600, height: 900 });
    await page.waitForTimeout(200);
    const fits = await page.evaluate(() => document.scrollingElement.scrollWidth <= window.innerWidth + 1);
    assert.ok(fits, 'no sideways scrolling at 600 px');
    await shot(page, 'narrow');
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'grants are created with an expiry and revoked'() {
    const { context, page, errors } = await openPage();
    await page.goto(BASE + '/#/grants');
    await page.getByRole('heading', { name: 'Grants' }).waitFor();
    await page.getByLabel('Tool').fill('edit');
    await page.getByLabel('Scope').selectOption('workspace_tool');
    await page.getByLabel('Workspace directory').fill(WS);
    await page.getByLabel('Expires in (minutes)').fill('30');
    await page.getByRole('button', { name: 'Create grant' }).click();
    const grants = page.getByRole('list', { name: 'Grants' });
    await grants.getByRole('button', { name: 'Revoke' }).first().waitFor({ timeout: WAIT });
    const listed = (await api('/hecate/v1/agent-chat/grants')).body.data;
    assert.equal(listed.length, 1);
    assert.ok(listed[0].expires_at, 'the grant expires');
    await shot(page, 'grants');
    await grants.getByRole('button', { name: 'Revoke' }).first().click();
    for (let i = 0; i < 50 && (await api('/hecate/v1/agent-chat/grants')).body.data.length; i += 1) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal((await api('/hecate/v1/agent-chat/grants')).body.data.length, 0);
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'with a token the page asks for it once and keeps it in session storage only'() {
    const { context, page, errors } = await openPage([/401/]);
    await page.goto(GUARDED + '/');
    const dialog = page.getByRole('dialog', { name: 'Access token' });
    await dialog.waitFor({ timeout: WAIT });
    await shot(page, 'token');
    await dialog.getByLabel('Access token').fill(TOKEN);
    await dialog.getByRole('button', { name: 'Save token' }).click();
    await page.getByRole('list', { name: 'Sessions' }).waitFor({ state: 'attached', timeout: WAIT });
    const stored = await page.evaluate(() => ({
      session: sessionStorage.getItem('hecate.token'),
      local: JSON.stringify(localStorage),
      cookie: document.cookie,
      url: location.href,
    }));
    assert.equal(stored.session, TOKEN);
    assert.ok(!stored.local.includes(TOKEN) && !stored.cookie.includes(TOKEN) && !stored.url.includes(TOKEN));
    assert.equal((await context.cookies()).length, 0);
    const banner = page.locator('.danger[role=alert]');
    await banner.waitFor({ timeout: WAIT });
    assert.match(await banner.textContent(), /auto/i);
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'a chat can be started and answered with the keyboard alone'() {
    const { context, page, errors } = await openPage();
    await page.goto(BASE + '/');
    await page.getByRole('heading', { name: 'Chats' }).waitFor();
    // Tab until the focus is on an element whose text or label matches.
    async function tabTo(re, limit = 60) {
      for (let i = 0; i < limit; i += 1) {
        await page.keyboard.press('Tab');
        const name = await page.evaluate(() => {
          const el = document.activeElement;
          if (!el) return '';
          const label = el.labels && el.labels[0] ? el.labels[0].textContent : '';
          return `${el.getAttribute('aria-label') || ''} ${label} ${el.textContent || ''} ${el.value || ''}`.trim();
        });
        if (re.test(name)) return;
      }
      throw new Error(`the keyboard never reached ${re}`);
    }
    await tabTo(/^New chat$/);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'New chat' }).waitFor();
    await tabTo(/Title/);
    await page.keyboard.type('Keyboard chat');
    // The targets' readiness loads after the form: Start chat is held until then.
    await page.waitForFunction(() => [...document.querySelectorAll('button')]
      .some((b) => b.textContent === 'Start chat' && b.getAttribute('aria-disabled') !== 'true'), null, { timeout: WAIT });
    await tabTo(/Start chat/);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Keyboard chat' }).waitFor({ timeout: WAIT });
    await tabTo(/Message/);
    await page.keyboard.type('typed without a mouse');
    await page.keyboard.press('Control+Enter');
    await assistants(page, 'completed').first().waitFor({ timeout: WAIT });
    const visible = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle !== 'none' || document.activeElement === document.body);
    assert.ok(visible, 'the focused control shows its focus');
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'pages render and the page weighs little'() {
    const { context, page, errors } = await openPage();
    const pending = [];
    page.on('response', (r) => {
      if (r.url().startsWith(BASE) && r.request().resourceType() !== 'fetch') {
        pending.push(r.body().catch(() => Buffer.alloc(0)));
      }
    });
    // In the page, from navigation start (performance.now()'s origin): when the
    // Sessions list is first attached (empty, before the sessions call answers)
    // and when it first holds a session's link. No test-tool polling in between.
    await page.addInitScript(() => {
      new MutationObserver((_, obs) => {
        const list = document.querySelector('ul[aria-label="Sessions"]');
        if (list && window.__listAt === undefined) window.__listAt = performance.now();
        if (list && list.querySelector('a[data-session-id]')) {
          window.__filledAt = performance.now();
          obs.disconnect();
        }
      }).observe(document, { childList: true, subtree: true });
    });
    await page.goto(BASE + '/');
    await page.getByRole('list', { name: 'Sessions' }).getByRole('link').first().waitFor();
    const at = await page.evaluate(() => [window.__listAt, window.__filledAt]);
    figures.chats_list_attached_ms = Math.round(at[0]);
    figures.chats_list_filled_ms = Math.round(at[1]);
    const bodies = await Promise.all(pending);
    figures.page_resources = bodies.length;
    figures.page_bytes = bodies.reduce((n, b) => n + b.length, 0);
    figures.page_bytes_gzip = bodies.reduce((n, b) => n + gzipSync(b).length, 0);
    await shot(page, 'chats');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(BASE + '/#/new');
    await page.getByRole('heading', { name: 'New chat' }).waitFor();
    await shot(page, 'new-chat-dark');
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'a 1,000-message transcript renders a page at a time, and streaming reaches the screen at once'() {
    const { context, page, errors } = await openPage();
    const created = await api('/hecate/v1/agent-chat/sessions', { method: 'POST', body: JSON.stringify({ model: 'fix/fixture-model', title: 'Long chat' }) });
    const id = created.body.data.id;
    for (let i = 0; i < 500; i += 1) {
      const r = await api(`/hecate/v1/agent-chat/sessions/${id}/messages`, { method: 'POST', body: JSON.stringify({ content: `turn ${i}` }) });
      assert.equal(r.status, 200);
    }
    const started = Date.now();
    await page.goto(`${BASE}/#/chats/${id}`);
    await assistants(page).nth(99).waitFor({ timeout: WAIT });
    figures.transcript_1000_first_page_ms = Date.now() - started;
    figures.transcript_articles_rendered = await transcript(page).locator('article').count();
    // "Load older" until the start: all 1,000 messages in the page, oldest first.
    const older = page.getByRole('button', { name: 'Load older' });
    const pagingStarted = Date.now();
    let pages = 1;
    while (await older.isVisible()) {
      const n = await transcript(page).locator('article').count();
      await older.click();
      await page.waitForFunction((k) => document.querySelectorAll('[role=log] article').length > k, n, { timeout: WAIT });
      pages += 1;
    }
    figures.transcript_1000_all_pages_ms = Date.now() - pagingStarted;
    figures.transcript_pages = pages;
    assert.equal(await transcript(page).locator('article').count(), 1000);
    assert.equal(await transcript(page).locator('article[data-role=user] .msg-body').first().textContent(), 'turn 0');

    // From a stream frame to the text on screen. The arrival of each chunk of the
    // session stream's body is taken from Chromium's own network events (DevTools
    // protocol, only the `/stream` requests' ids), converted to wall-clock time by
    // the request's wallTime/timestamp pair. In the page (performance.timeOrigin +
    // now(), wall clock too), a MutationObserver takes the time the transcript's DOM
    // changed and a requestAnimationFrame callback the time of the frame that
    // paints it; only frames where the running answer's text changed count. Each
    // is paired with the latest stream chunk that arrived before the DOM change:
    // to the DOM covers SSE parsing, JSON and rendering the Markdown; to the frame
    // adds the wait for the next frame (up to ~16.7 ms at 60 Hz). Not included: the
    // server's loopback send, the same for any client.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    let offset = null;
    const streamIds = new Set();
    const chunks = [];
    cdp.on('Network.requestWillBeSent', (e) => {
      if (new URL(e.request.url).pathname.endsWith('/stream')) {
        streamIds.add(e.requestId);
        offset = e.wallTime * 1000 - e.timestamp * 1000;
      }
    });
    cdp.on('Network.dataReceived', (e) => {
      if (streamIds.has(e.requestId)) chunks.push(e.timestamp * 1000);
    });
    // Re-open the stream so its request is seen from the start.
    await page.reload();
    await transcript(page).locator('article').first().waitFor({ timeout: WAIT });
    await page.evaluate(() => {
      window.__frames = [];
      let pending = false;
      let lastLength = -1;
      new MutationObserver(() => {
        if (pending) return;
        pending = true;
        const mutated = performance.timeOrigin + performance.now();
        requestAnimationFrame(() => {
          pending = false;
          const live = document.querySelector('article[data-role=assistant][data-status=running] .msg-body');
          const length = live ? live.textContent.length : -1;
          if (live && length !== lastLength) window.__frames.push([mutated, performance.timeOrigin + performance.now()]);
          lastLength = length;
        });
      }).observe(document.querySelector('[role=log]'), { subtree: true, childList: true, characterData: true });
    });
    await send(page, 'now slow again');
    await assistants(page, 'running').first().waitFor({ timeout: WAIT });
    await page.waitForFunction(() => !document.querySelector('article[data-role=assistant][data-status=running]'), null, { timeout: WAIT });
    const frames = await page.evaluate(() => window.__frames);
    if (offset !== null && chunks.length) {
      const arrived = chunks.map((t) => t + offset).sort((a, b) => a - b);
      // 1 ms of slack for the two clocks' rounding.
      const pairs = frames.map(([dom, frame]) => {
        const before = arrived.filter((a) => a <= dom + 1);
        const at = before[before.length - 1];
        return before.length ? [Math.max(0, dom - at), Math.max(0, frame - at)] : null;
      }).filter(Boolean);
      const stat = (xs) => {
        xs.sort((a, b) => a - b);
        const r = (x) => Math.round(x * 10) / 10;
        return { median: r(xs[Math.floor(xs.length / 2)]), p95: r(xs[Math.floor(xs.length * 0.95)]), max: r(xs[xs.length - 1]) };
      };
      if (pairs.length) {
        // To the DOM holding the text, and to the frame that paints it.
        figures.sse_to_dom_ms = stat(pairs.map((p) => p[0]));
        figures.sse_to_frame_ms = stat(pairs.map((p) => p[1]));
        figures.sse_samples = pairs.length;
        figures.sse_stream_chunks = chunks.length;
      }
    }
    await shot(page, 'long-transcript');
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'nothing is fetched while a chat sits idle'() {
    const { context, page, errors } = await openPage();
    const list = await api('/hecate/v1/agent-chat/sessions?limit=1');
    await page.goto(`${BASE}/#/chats/${list.body.data[0].id}`);
    await transcript(page).locator('article').first().waitFor({ timeout: WAIT });
    await page.waitForTimeout(500);
    let requests = 0;
    page.on('request', () => { requests += 1; });
    await page.waitForTimeout(3000);
    assert.equal(requests, 0, 'no polling when idle');
    assert.deepEqual(errors, []);
    await context.close();
  },
};

