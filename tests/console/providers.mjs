// The Providers page's browser scenarios, on the open server (HECATE_URL), whose
// providers are `fix` (the fixture model), `dead` and `down` (a closed port),
// and `spare` (the fixture model again): a provider that is down shows blocked
// with the API's operator_action; a preset's env snippet is shown and copied;
// the fixture model's capabilities are shown, overridden from the form (the
// API agrees) and the override removed; a probe records what the model did.
// Every value asserted on the page is read from the API first.

import assert from 'node:assert/strict';
import { BASE, WAIT, figures, api, openPage, shot } from './harness.mjs';

/** The API's status row of provider `name`. */
async function statusOf(name) {
  const res = await api('/hecate/v1/providers/status');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const row = res.body.data.find((p) => p.name === name);
  assert.ok(row, `${name} in ${JSON.stringify(res.body)}`);
  return row;
}

/** The effective capabilities /v1/models gives provider/model `id`. */
async function capsOf(id) {
  const res = await api('/v1/models');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const m = res.body.data.find((x) => `${x.metadata.provider}/${x.metadata.model}` === id);
  assert.ok(m, `${id} in /v1/models`);
  return m.metadata.capabilities;
}

export const scenarios = {
  async 'a provider that is down shows blocked with its operator_action on the providers page'() {
    const dead = await statusOf('dead');
    assert.equal(dead.routing_ready, false, JSON.stringify(dead));
    const blocked = dead.readiness_checks.filter((c) => c.status === 'blocked' && c.operator_action);
    assert.ok(blocked.length, `a blocked check with an action: ${JSON.stringify(dead)}`);

    const { context, page, errors } = await openPage();
    await page.goto(BASE + '/#/providers');
    const section = page.getByRole('region', { name: 'dead', exact: true });
    await section.waitFor({ timeout: WAIT });
    figures.providers_first_render_ms = await page.evaluate(() => Math.round(performance.now()));
    assert.equal(await section.getAttribute('data-ready'), 'false');
    assert.equal(await section.getAttribute('data-reason'), dead.routing_blocked_reason);
    const verdict = await section.locator('.provider-verdict').textContent();
    assert.match(verdict, /The router skips it/);
    assert.ok(verdict.includes(dead.routing_blocked_reason), verdict);
    for (const c of blocked) assert.ok(verdict.includes(c.operator_action), `${c.operator_action} in ${verdict}`);

    const checks = section.getByRole('list', { name: 'Readiness of dead' });
    for (const c of dead.readiness_checks) {
      const item = checks.locator(`li[data-check="${c.name}"]`);
      assert.equal(await item.getAttribute('data-status'), c.status, c.name);
      assert.equal(await item.getAttribute('data-reason'), c.reason, c.name);
      const text = await item.textContent();
      if (c.operator_action) assert.ok(text.includes(c.operator_action), `${c.name}: ${text}`);
    }
    const health = section.getByRole('definition').first();
    assert.ok(await health.isVisible());
    assert.match(await section.textContent(), /ghost-model/);
    assert.match(await section.textContent(), /127\.0\.0\.1:9\/v1/);

    // A ready one reads ready; the summary counts both.
    const fix = page.getByRole('region', { name: 'fix', exact: true });
    assert.equal(await fix.getAttribute('data-ready'), 'true');
    assert.match(await page.getByRole('status').textContent(), /routing-ready/);
    await section.scrollIntoViewIfNeeded();
    await shot(page, 'providers');

    // The address names a provider: its heading gets the focus.
    await page.goto(BASE + '/#/providers/dead');
    await page.waitForFunction(() => document.activeElement && document.activeElement.textContent === 'dead', null, { timeout: WAIT });
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'a provider preset shows its env snippet and Copy puts it on the clipboard'() {
    const presets = await api('/hecate/v1/providers/presets');
    assert.equal(presets.status, 200);
    const openai = presets.body.data.find((p) => p.id === 'openai');
    assert.ok(openai);

    const { context, page, errors } = await openPage();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
    await page.goto(BASE + '/#/providers');
    const list = page.getByRole('list', { name: 'Presets' });
    const item = list.locator('li[data-preset-id="openai"]');
    await item.waitFor({ timeout: WAIT });
    const pre = item.locator('pre');
    assert.equal(await pre.textContent(), openai.env_snippet);
    assert.equal(await pre.getAttribute('aria-label'), 'Environment for OpenAI');
    await item.getByRole('button', { name: /Copy/ }).click();
    await item.getByText('Copied.').waitFor({ timeout: WAIT });
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), openai.env_snippet);
    assert.equal(await list.locator('li').count(), presets.body.data.length);

    // Local discovery answers a row per local preset.
    const discovery = await api('/hecate/v1/settings/providers/local-discovery');
    const table = page.getByRole('table', { name: 'Local discovery' });
    await table.locator('tbody tr[data-preset-id]').first().waitFor({ timeout: WAIT });
    for (const d of discovery.body.data) {
      assert.equal(await table.locator(`tr[data-preset-id="${d.preset_id}"]`).getAttribute('data-status'), d.status);
    }
    await item.scrollIntoViewIfNeeded();
    await shot(page, 'providers-presets');
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'the providers page shows the fixture model capabilities, overrides them and probes a model'() {
    const id = 'fix/fixture-model';
    const before = await capsOf(id);
    const { context, page, errors } = await openPage([/the server responded with a status of 404/]);
    await page.goto(BASE + '/#/providers');
    const table = page.getByRole('table', { name: 'Models' });
    const row = table.locator(`tr[data-model-id="${id}"]`);
    await row.waitFor({ timeout: WAIT });
    assert.equal(await row.locator('.cap-tools').textContent(), before.tool_calling);
    assert.equal(await row.locator('.cap-source').textContent(), before.source);

    // Override it from the form; the API and the row agree.
    await row.getByRole('button', { name: `Override ${id}` }).click();
    const form = page.getByRole('form', { name: 'Capability override' });
    assert.equal(await form.getByLabel('Model').inputValue(), id);
    await form.getByLabel('Tool calling').selectOption('parallel');
    await form.getByLabel('Context window (tokens)').fill('32768');
    await form.getByLabel('Note').fill('set from the console test');
    await form.getByRole('button', { name: 'Save override' }).click();
    await page.locator(`tr[data-model-id="${id}"][data-source="operator_override"]`).waitFor({ timeout: WAIT });
    const after = await capsOf(id);
    assert.equal(after.tool_calling, 'parallel');
    assert.equal(after.max_context_tokens, 32768);
    assert.equal(after.source, 'operator_override');
    assert.equal(await row.locator('.cap-tools').textContent(), 'parallel');
    assert.match(await form.textContent(), /Saved: fix\/fixture-model now calls tools parallel/);
    await table.scrollIntoViewIfNeeded();
    await shot(page, 'providers-models');

    // Removed: the previous source speaks again.
    await form.getByRole('button', { name: 'Remove override' }).click();
    await page.locator(`tr[data-model-id="${id}"][data-source="${before.source}"]`).waitFor({ timeout: WAIT });
    assert.deepEqual(await capsOf(id), before);

    // A probe of a model only the traces use: the fixture answers with text, so
    // it records `none` from a probe (fix/fixture-model is left alone: tasks
    // and agent chats give it tools).
    const probed = 'spare/priced-model';
    const prow = table.locator(`tr[data-model-id="${probed}"]`);
    await prow.getByRole('button', { name: `Probe ${probed}` }).click();
    await page.locator(`tr[data-model-id="${probed}"][data-source="probe"]`).waitFor({ timeout: WAIT });
    const caps = await capsOf(probed);
    assert.equal(caps.source, 'probe');
    assert.equal(await table.locator(`tr[data-model-id="${probed}"] .cap-tools`).textContent(), caps.tool_calling);
    assert.match(await page.getByText(/^Probe of spare\/priced-model/).textContent(), new RegExp(`tool calling ${caps.tool_calling}`));
    assert.deepEqual(errors, []);
    await context.close();
  },
};
