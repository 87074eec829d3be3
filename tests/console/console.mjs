// The console's browser scenarios, run by tests/interop/console_browser.rs against
// a real `hecate serve` (HECATE_URL; HECATE_GUARDED_URL with HECATE_TOKEN), the
// fixture model and the fixture ACP agent, in Debian's Chromium through
// playwright-core (PLAYWRIGHT). Everything is done through the page; the API is
// used only to set up and to check. Any browser console error or page error not
// expected by the scenario fails it. Screenshots go to SHOTS; the loopback
// figures are printed at the end (no timing assertions).

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import assert from 'node:assert/strict';

const { chromium } = await import(process.env.PLAYWRIGHT);
const BASE = process.env.HECATE_URL;
const GUARDED = process.env.HECATE_GUARDED_URL;
const TOKEN = process.env.HECATE_TOKEN;
const WS = process.env.WORKSPACE;
const SHOTS = process.env.SHOTS;
const WAIT = 20000;

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

const figures = {};

/** JSON from the API of the open server. */
async function api(path, init = {}) {
  const res = await fetch(BASE + path, {
    ...init,
    headers: { 'content-type': 'application/json', ...(init.headers || {}) },
  });
  const body = await res.json().catch(() => null);
  return { status: res.status, body };
}

async function sessionCount() {
  return (await api('/hecate/v1/agent-chat/sessions?limit=1000')).body.data.length;
}

/** A fresh page whose console errors and page errors are collected; `allowed`
 * matches errors the scenario expects (the browser logs every 4xx fetch). */
async function openPage(allowed = []) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !allowed.some((re) => re.test(m.text()))) errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => { errors.push(`dialog: ${d.message()}`); d.dismiss(); });
  return { context, page, errors };
}

async function shot(page, name) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
}

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

const scenarios = {
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
    await page.getByRole('button', { name: 'Start chat' }).click({ trial: false, force: true }).catch(() => {});
    await page.waitForTimeout(300);
    assert.match(page.url(), /#\/new/);
    assert.equal(await sessionCount(), before, 'no session was created');
    await shot(page, 'new-chat-blocked');
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
    // Leave the workspace as it was for the other scenarios.
    const answer = s.body.data.messages.find((m) => m.role === 'assistant');
    await api(`/hecate/v1/agent-chat/sessions/${id}/messages/${answer.id}/revert`, { method: 'POST', body: '{"paths":[]}' });
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'a prompt sent while busy is queued and sent after the turn'() {
    const { context, page, errors } = await openPage();
    const id = await startChat(page, { target: 'Model', model: 'fix/fixture-model', title: 'Queue chat' });
    await send(page, 'first, slow please');
    await assistants(page, 'running').first().waitFor({ timeout: WAIT });
    await send(page, 'second prompt');
    const queue = page.getByRole('list', { name: 'Queued next' });
    await queue.getByText('second prompt').waitFor();
    await send(page, 'third prompt to remove');
    await queue.getByRole('listitem').filter({ hasText: 'third prompt' }).getByRole('button', { name: 'Remove' }).click();
    await shot(page, 'queue');
    await page.waitForFunction(() => document.querySelectorAll('article[data-role=assistant][data-status=completed]').length >= 2, null, { timeout: WAIT });
    const s = await api(`/hecate/v1/agent-chat/sessions/${id}`);
    const prompts = s.body.data.messages.filter((m) => m.role === 'user').map((m) => m.content);
    assert.deepEqual(prompts, ['first, slow please', 'second prompt']);
    assert.equal(await page.evaluate((k) => localStorage.getItem(k), `hecate.queue.${id}`), null);
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
    const bodies = [];
    page.on('response', async (r) => {
      if (r.url().startsWith(BASE) && r.request().resourceType() !== 'fetch') {
        bodies.push(await r.body().catch(() => Buffer.alloc(0)));
      }
    });
    await page.goto(BASE + '/');
    await page.getByRole('list', { name: 'Sessions' }).getByRole('link').first().waitFor();
    figures.page_bytes = bodies.reduce((n, b) => n + b.length, 0);
    figures.page_bytes_gzip = bodies.reduce((n, b) => n + gzipSync(b).length, 0);
    await shot(page, 'chats');
    await page.goto(BASE + '/#/grants');
    await page.getByRole('heading', { name: 'Grants' }).waitFor();
    await shot(page, 'grants');
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

    // From the stream's bytes arriving (CDP, network clock) to the text on the
    // screen (a MutationObserver in the page, page clock), per growth of the answer.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    let offset = null;
    const chunks = [];
    cdp.on('Network.requestWillBeSent', (e) => {
      if (e.request.url.endsWith('/stream')) offset = e.wallTime * 1000 - e.timestamp * 1000;
    });
    cdp.on('Network.dataReceived', (e) => chunks.push(e.timestamp * 1000));
    // Re-open the stream so its request is seen from the start.
    await page.reload();
    await transcript(page).locator('article').first().waitFor({ timeout: WAIT });
    await page.evaluate(() => {
      window.__growth = [];
      new MutationObserver(() => {
        if (document.querySelector('article[data-role=assistant][data-status=running]')) {
          window.__growth.push(performance.timeOrigin + performance.now());
        }
      }).observe(document.querySelector('[role=log]'), { subtree: true, childList: true, characterData: true });
    });
    await send(page, 'now slow again');
    await assistants(page, 'running').first().waitFor({ timeout: WAIT });
    await page.waitForFunction(() => !document.querySelector('article[data-role=assistant][data-status=running]'), null, { timeout: WAIT });
    const growth = await page.evaluate(() => window.__growth);
    if (offset !== null && chunks.length) {
      const arrived = chunks.map((t) => t + offset).sort((a, b) => a - b);
      const delays = growth.map((g) => {
        const before = arrived.filter((a) => a <= g + 1);
        return before.length ? g - before[before.length - 1] : null;
      }).filter((d) => d !== null && d >= 0).sort((a, b) => a - b);
      if (delays.length) {
        figures.sse_to_screen_median_ms = Math.round(delays[Math.floor(delays.length / 2)] * 10) / 10;
        figures.sse_to_screen_p95_ms = Math.round(delays[Math.floor(delays.length * 0.95)] * 10) / 10;
        figures.sse_to_screen_samples = delays.length;
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

const only = process.env.ONLY;
let failed = 0;
for (const [name, run] of Object.entries(scenarios)) {
  if (only && !name.includes(only)) continue;
  const started = Date.now();
  try {
    await run();
    console.log(`ok   ${name} (${Date.now() - started} ms)`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
}
await browser.close();
console.log(`figures ${JSON.stringify(figures)}`);
if (failed) {
  console.log(`${failed} scenario(s) failed`);
  process.exit(1);
}
console.log('all scenarios passed');
