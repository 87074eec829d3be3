// The Traces page's browser scenarios: a /v1 request that failed over shows both
// route candidates with the reason in the inspector; the filters narrow the list,
// live in the address and the pages follow each other; the cost chart's table
// totals what the API's traces cost; the first render with 10,000 traces.
// The open server (tests/interop/console_browser.rs) serves a bare
// `failover-model` from `down` (a closed port) then `spare` (the fixture), and a
// priced `priced-model` from `spare` alone.

import assert from 'node:assert/strict';
import { BASE, WAIT, figures, api, openPage, shot } from './harness.mjs';

/** Sends one /v1 chat completion; answers the HTTP status. */
async function complete(model, requestId, text = 'trace me') {
  const headers = { 'content-type': 'application/json' };
  if (requestId) headers['X-Request-Id'] = requestId;
  const res = await fetch(`${BASE}/v1/chat/completions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model, messages: [{ role: 'user', content: text }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Sends `n` completions, `parallel` at a time. */
async function seed(model, n, parallel = 32) {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next += 1;
      await complete(model);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, n) }, worker));
}

/** Every trace `query` selects (through the API, 1,000 a page). */
async function allTraces(query = {}) {
  const out = [];
  for (let offset = 0; ; offset += 1000) {
    const qs = new URLSearchParams({ ...query, limit: '1000', offset: String(offset) });
    const r = await api(`/hecate/v1/traces?${qs}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    out.push(...r.body.data);
    if (r.body.data.length < 1000) return out;
  }
}

/** Waits until the API lists the trace of `requestId`. */
async function traced(requestId) {
  for (let i = 0; i < 200; i += 1) {
    const r = await api(`/hecate/v1/traces?request_id=${encodeURIComponent(requestId)}`);
    if (r.body && r.body.data && r.body.data.length) return r.body.data[0];
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`no trace for ${requestId}`);
}

const sum = (traces) => traces.reduce((s, t) => s + (typeof t.cost_micros_usd === 'number' ? t.cost_micros_usd : 0), 0);
const traceRows = (page) => page.getByRole('table', { name: 'Traces' }).locator('tbody tr');

export const scenarios = {
  async 'a /v1 request that failed over shows both candidates and the reason in the trace inspector'() {
    const id = `trace-failover-${Date.now()}`;
    assert.equal(await complete('failover-model', id, 'fail me over'), 200);
    const stored = await traced(id);
    assert.equal(stored.provider, 'spare', JSON.stringify(stored));

    const { context, page, errors } = await openPage();
    await page.goto(BASE + '/#/traces');
    const row = page.getByRole('table', { name: 'Traces' }).locator(`tr[data-request-id="${id}"]`);
    await row.waitFor({ timeout: WAIT });
    await row.getByRole('link', { name: id }).click();
    await page.waitForURL(new RegExp(`#/traces/${id}`));
    const inspector = page.getByRole('region', { name: `Trace ${id}` });
    await inspector.waitFor({ timeout: WAIT });
    const candidates = inspector.getByRole('table', { name: 'Route candidates' }).locator('tbody tr');
    assert.equal(await candidates.count(), 2);
    const first = candidates.nth(0);
    assert.match(await first.textContent(), /down/);
    assert.ok(['failed', 'skipped'].includes(await first.getAttribute('data-outcome')));
    const reason = await first.getAttribute('data-skip-reason');
    assert.ok(['provider_unhealthy', 'circuit_open'].includes(reason), reason);
    assert.match(await first.textContent(), new RegExp(reason));
    const second = candidates.nth(1);
    assert.equal(await second.getAttribute('data-outcome'), 'selected');
    assert.match(await second.textContent(), /spare/);
    assert.match(await inspector.textContent(), /Failed over: down/);
    // The row is marked as the one shown.
    assert.equal(await row.getAttribute('class'), 'selected');
    // The raw trace, behind its disclosure.
    const raw = inspector.getByRole('group', { name: 'Raw trace' });
    assert.equal(await raw.locator('pre').isVisible(), false);
    await raw.getByText('Raw trace').click();
    const json = JSON.parse(await raw.locator('pre').textContent());
    assert.deepEqual(json.route_candidates.map((c) => c.provider), ['down', 'spare']);
    assert.equal(json.request_id, id);
    await shot(page, 'traces-inspector');

    // The address alone opens the inspector, in a fresh page.
    const other = await openPage();
    await other.page.goto(`${BASE}/#/traces/${id}`);
    await other.page.getByRole('region', { name: `Trace ${id}` }).getByRole('table', { name: 'Route candidates' }).waitFor({ timeout: WAIT });
    assert.deepEqual(other.errors, []);
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'the traces filters narrow the list, live in the address, and the pages follow each other'() {
    // Whole seconds, never :00 (Chromium shows a datetime-local value with zero
    // seconds without them, which Playwright's fill reads as malformed).
    let sinceMs = Math.floor(Date.now() / 1000) * 1000 - 1000;
    if (new Date(sinceMs).getSeconds() === 0) sinceMs -= 1000;
    const since = new Date(sinceMs);
    await seed('priced-model', 62);
    // Two failures, on the provider that cannot answer.
    for (let i = 0; i < 2; i += 1) assert.ok((await complete('ghost-model')) >= 500, 'dead/ghost-model cannot answer');
    const sinceIso = since.toISOString();
    const want = await allTraces({ model: 'priced-model', provider: 'spare', status: 'completed', since: sinceIso });
    assert.ok(want.length >= 62, `${want.length} seeded traces`);

    const { context, page, errors } = await openPage();
    await page.goto(BASE + '/#/traces');
    await traceRows(page).first().waitFor({ timeout: WAIT });
    const filters = page.getByRole('search', { name: 'Filter traces' });
    await filters.getByLabel('Model').fill('priced-model');
    await filters.getByLabel('Provider').fill('spare');
    await filters.getByLabel('Status').selectOption('completed');
    const p = (n) => String(n).padStart(2, '0');
    const local = `${since.getFullYear()}-${p(since.getMonth() + 1)}-${p(since.getDate())}T${p(since.getHours())}:${p(since.getMinutes())}:${p(since.getSeconds())}`;
    await filters.getByLabel('Since').fill(local);
    await filters.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/#\/traces\?.*model=priced-model/);
    const url = new URL(page.url());
    const q = new URLSearchParams(url.hash.split('?')[1]);
    assert.equal(q.get('model'), 'priced-model');
    assert.equal(q.get('provider'), 'spare');
    assert.equal(q.get('status'), 'completed');
    assert.equal(q.get('since'), sinceIso);
    await page.getByText(/^Traces 1–50, newest first, filtered\.$/).waitFor({ timeout: WAIT });
    const ids = async () => traceRows(page).evaluateAll((rows) => rows.map((r) => r.dataset.requestId));
    const firstPage = await ids();
    assert.deepEqual(firstPage, want.slice(0, 50).map((t) => t.request_id), 'the newest 50 of the filter, in order');
    for (const t of await traceRows(page).allTextContents()) assert.match(t, /priced-model.*spare.*completed/s);

    await page.getByRole('button', { name: 'Older' }).click();
    await page.waitForURL(/offset=50/);
    await page.getByText(/^Traces 51–/).waitFor({ timeout: WAIT });
    const secondPage = await ids();
    assert.deepEqual(secondPage, want.slice(50, 100).map((t) => t.request_id), 'the next page follows without repeats');
    assert.equal(await page.getByRole('button', { name: 'Older' }).isDisabled(), want.length <= 100);
    await page.getByRole('button', { name: 'Newer' }).click();
    await page.getByText(/^Traces 1–50/).waitFor({ timeout: WAIT });
    assert.deepEqual(await ids(), firstPage);
    assert.equal(await page.getByRole('button', { name: 'Newer' }).isDisabled(), true);

    // The address alone reproduces the view, filters filled in.
    const again = await openPage();
    await again.page.goto(page.url());
    await again.page.getByText(/^Traces 1–50, newest first, filtered\.$/).waitFor({ timeout: WAIT });
    const f2 = again.page.getByRole('search', { name: 'Filter traces' });
    assert.equal(await f2.getByLabel('Model').inputValue(), 'priced-model');
    assert.equal(await f2.getByLabel('Provider').inputValue(), 'spare');
    assert.equal(await f2.getByLabel('Status').inputValue(), 'completed');
    assert.equal(await f2.getByLabel('Since').inputValue(), local);
    assert.deepEqual(await traceRows(again.page).evaluateAll((rows) => rows.map((r) => r.dataset.requestId)), firstPage);
    assert.deepEqual(again.errors, []);

    // A status filter alone: only failures.
    await filters.getByLabel('Model').fill('');
    await filters.getByLabel('Provider').fill('');
    await filters.getByLabel('Status').selectOption('failed');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/status=failed/);
    const failed = await allTraces({ status: 'failed', since: sinceIso });
    assert.ok(failed.length >= 2, 'the ghost-model failures');
    // The previous page's caption also ends in "filtered.", so wait for the
    // rows themselves: every one failed, as many as the API holds.
    await page.waitForFunction((want) => {
      const rows = [...document.querySelectorAll('table[aria-label="Traces"] tbody tr')];
      return rows.length === want && rows.every((r) => r.dataset.status === 'failed');
    }, Math.min(50, failed.length), { timeout: WAIT });
    const statuses = await traceRows(page).evaluateAll((rows) => rows.map((r) => r.dataset.status));
    assert.equal(statuses.length, Math.min(50, failed.length));
    assert.ok(statuses.every((s) => s === 'failed'), statuses.join());
    // A status the API does not know is refused with a clear message.
    const bad = await api('/hecate/v1/traces?status=done');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.type, 'invalid_request');
    assert.match(bad.body.error.message, /status.*completed.*failed.*cancelled/);
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'the cost chart totals what the filtered traces cost, per day, provider and model'() {
    await seed('priced-model', 20);
    await seed('failover-model', 3);
    const { context, page, errors } = await openPage();
    for (const [hash, query] of [['#/traces?provider=spare', { provider: 'spare' }], ['#/traces', {}]]) {
      const want = await allTraces(query);
      assert.ok(want.length < 10000, 'under the cap');
      const micros = sum(want);
      assert.ok(micros > 0, 'priced traces cost something');
      await page.goto(`${BASE}/${hash}`);
      await page.reload();
      for (const [by, name] of [['day', 'Cost by day'], ['provider', 'Cost by provider'], ['model', 'Cost by model']]) {
        if (by !== 'day') await page.getByLabel('Group cost by').selectOption(by);
        const table = page.getByRole('table', { name });
        await table.waitFor({ timeout: WAIT });
        const total = table.locator('tfoot .cost-total');
        assert.equal(Number(await total.getAttribute('data-micros')), micros, `${name} of ${hash}`);
        assert.equal(await total.textContent(), `$${Math.floor(micros / 1e6).toLocaleString('en-US')}.${String(micros % 1e6).padStart(6, '0')}`);
        const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => Number(tr.dataset.micros)));
        assert.equal(rows.reduce((a, b) => a + b, 0), micros, 'the rows add up to the total');
        assert.equal(Number(await table.locator('tfoot td').first().textContent().then((t) => t.replace(/,/g, ''))), want.length);
        // The chart is a picture with a name; the table is its text.
        await page.getByRole('img', { name: new RegExp(`^${name}:`) }).waitFor();
        if (by === 'provider') {
          const spare = await table.locator('tbody tr[data-key="spare"]').getAttribute('data-micros');
          assert.equal(Number(spare), sum(want.filter((t) => t.provider === 'spare')));
        }
      }
      // Regrouping kept the address.
      assert.match(page.url(), /by=model/);
    }
    await page.goto(`${BASE}/#/traces?provider=spare&by=provider`);
    await page.reload();
    await page.getByRole('table', { name: 'Cost by provider' }).waitFor({ timeout: WAIT });
    // Open a trace: the chart stays (no second read of every trace).
    const first = traceRows(page).first();
    await first.getByRole('link').first().click();
    await page.getByRole('table', { name: 'Route candidates' }).waitFor({ timeout: WAIT });
    await page.getByRole('table', { name: 'Cost by provider' }).waitFor({ timeout: WAIT });
    await page.setViewportSize({ width: 1280, height: 1400 });
    await shot(page, 'traces');
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'the traces page renders its first page with 10,000 traces in the store'() {
    // 10,000 traces (and a few more), seeded through /v1 in parallel.
    const have = (await allTraces()).length;
    const target = 10050;
    const started = Date.now();
    if (have < target) await seed('priced-model', target - have, 48);
    figures.traces_seeded = { traces: target, seconds: Math.round((Date.now() - started) / 100) / 10 };
    const { context, page, errors } = await openPage();
    // The moment the first row is attached, seen from inside the page.
    await context.addInitScript(() => {
      new MutationObserver((_, obs) => {
        if (!window.__firstRow && document.querySelector('table[aria-label="Traces"] tbody tr')) {
          window.__firstRow = performance.now();
          obs.disconnect();
        }
      }).observe(document, { childList: true, subtree: true });
    });
    await page.goto(BASE + '/#/traces');
    await traceRows(page).first().waitFor({ timeout: WAIT });
    figures.traces_first_render_ms = await page.evaluate(() => Math.round(performance.now()));
    figures.traces_first_row_attached_ms = await page.evaluate(() => Math.round(window.__firstRow));
    assert.equal(await traceRows(page).count(), 50, 'one page at a time');
    // The chart sums every trace on the server: no cap, one request.
    const costs = page.getByRole('region', { name: 'Cost' });
    await costs.getByRole('table', { name: 'Cost by day' }).waitFor({ timeout: 60000 });
    const all = (await allTraces()).length;
    assert.ok(all >= target, `${all} traces`);
    assert.equal(await costs.getAttribute('data-traces'), String(all));
    assert.match(await costs.textContent(), /every trace of the filter/);
    figures.traces_cost_requests = await page.evaluate(() => performance.getEntriesByType('resource')
      .filter((r) => r.name.includes('/hecate/v1/traces/costs')).length);
    assert.equal(figures.traces_cost_requests, 1, 'one sum, not a read of every trace');
    // Where the first render's time went: the traces request's end, and the
    // same render again in the warm context (modules cached, chart done).
    figures.traces_first_list_request_ms = await page.evaluate(() => {
      const e = performance.getEntriesByType('resource').find((r) => r.name.includes('/hecate/v1/traces?') && r.name.includes('limit=51'));
      return { start: Math.round(e.startTime), end: Math.round(e.responseEnd) };
    });
    await page.reload();
    await traceRows(page).first().waitFor({ timeout: WAIT });
    figures.traces_warm_render_ms = await page.evaluate(() => Math.round(performance.now()));
    await costs.getByRole('table', { name: 'Cost by day' }).waitFor({ timeout: 60000 });
    assert.deepEqual(errors, []);
    await context.close();
  },
};
