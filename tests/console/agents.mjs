// The Agents page's browser scenarios. The open server's home has `packed`, an
// adapter that is not installed whose npm package is the tarball packed here
// (with `npm pack`) into target/console-agents before the page installs it, a
// broken manifest (`broken.toml`), and the fixture agent `fixture`.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { BASE, WS, WAIT, figures, api, openPage, shot } from './harness.mjs';

const INSTALL_WAIT = 120000;

/** Packs `hecate-fixture-acp@1.2.3` (bin `fixture-acp` runs the fixture ACP
 * agent) into target/console-agents, where the `packed` manifest points. */
function packFixture() {
  const dir = join(process.env.SHOTS, '..', 'console-agents');
  const pkg = join(dir, 'pkg');
  mkdirSync(join(pkg, 'bin'), { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({
    name: 'hecate-fixture-acp', version: '1.2.3', bin: { 'fixture-acp': 'bin/fixture-acp' },
  }));
  const bin = join(pkg, 'bin', 'fixture-acp');
  writeFileSync(bin, `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "fixture-acp 1.2.3"; exit 0; fi\nexec ${JSON.stringify(process.env.HECATE_FIXTURES)} acp-agent "$@"\n`);
  chmodSync(bin, 0o755);
  execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], {
    cwd: pkg, env: { ...process.env, npm_config_update_notifier: 'false' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function adapterRow(id) {
  return (await api('/hecate/v1/agent-adapters')).body.data.find((a) => a.id === id);
}

export const scenarios = {
  async 'Agents page: an adapter that is not installed shows its fix and installs from a packed fixture tarball'() {
    packFixture();
    const before = await adapterRow('packed');
    assert.equal(before.status, 'missing', 'not installed before the page installs it');

    const { context, page, errors } = await openPage();
    await page.goto(BASE + '/#/agents');
    const packed = page.locator('section[data-adapter-id=packed]');
    await packed.waitFor({ timeout: WAIT });
    figures.agents_first_render_ms = await page.evaluate(() => Math.round(performance.now()));
    assert.equal(await packed.getAttribute('data-state'), 'not_installed');
    assert.match(await packed.locator('.agent-fix').textContent(), /Install it: press Install \(npm package .*hecate-fixture-acp-1\.2\.3\.tgz/);
    assert.match(await packed.getByRole('definition').first().textContent(), /hecate-no-such-packed-acp/);
    // The operator's own manifests, and the one that did not load with its error.
    await page.getByRole('list', { name: 'Your manifests' }).locator('li[data-adapter-id=packed]').waitFor();
    const broken = page.getByRole('list', { name: 'Manifests that did not load' }).locator('li');
    assert.match(await broken.first().textContent(), /broken\.toml.*—/);

    await packed.getByRole('button', { name: 'Install Packed fixture' }).click();
    const ready = page.locator('section[data-adapter-id=packed][data-state=ready]');
    await ready.waitFor({ timeout: INSTALL_WAIT });
    const status = ready.getByRole('status', { name: 'Install of Packed fixture' });
    assert.equal(await status.getAttribute('data-state'), 'succeeded');
    assert.match(await status.textContent(), /Installed Packed fixture 1\.2\.3/);
    const stages = ready.getByRole('list', { name: 'Install progress of Packed fixture' }).locator('li');
    assert.deepEqual(await stages.evaluateAll((els) => els.map((e) => `${e.dataset.stage}:${e.dataset.state}`)),
      ['resolving', 'cleaning', 'downloading', 'verifying', 'placing', 'done'].map((s) => `${s}:done`));
    assert.equal(await ready.locator('.agent-fix').count(), 0, 'no fix once ready');

    // The new install answers its health check.
    await ready.getByRole('button', { name: 'Check health of Packed fixture' }).click();
    const health = ready.getByRole('status', { name: 'Health of Packed fixture' });
    await ready.locator('.agent-health[data-status=ready]').waitFor({ timeout: WAIT });
    assert.equal(await health.getAttribute('data-stage'), 'ready');
    await ready.scrollIntoViewIfNeeded();
    await shot(page, 'agents');

    const after = await adapterRow('packed');
    assert.equal(after.status, 'available');
    assert.equal(after.source, 'managed');
    assert.equal(after.version, '1.2.3');
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'Agents page: a health check shows the stage it reached and the agent\'s stderr'() {
    const catalog = (await api('/hecate/v1/agent-adapters')).body.data;
    const missing = catalog.find((a) => a.origin === 'builtin' && a.status === 'missing');
    const { context, page, errors } = await openPage();
    await page.goto(BASE + '/#/agents');
    const fixture = page.locator('section[data-adapter-id=fixture]');
    await fixture.waitFor({ timeout: WAIT });
    await fixture.getByRole('button', { name: 'Check health of Fixture fixture' }).click();
    await fixture.locator('.agent-health[data-status=ready]').waitFor({ timeout: WAIT });
    assert.equal(await fixture.getByRole('status', { name: 'Health of Fixture fixture' }).getAttribute('data-stage'), 'ready');
    assert.match(await fixture.getByRole('status', { name: 'Health of Fixture fixture' }).textContent(), /ready at stage ready/);
    // An agent that dies at start: the stage it failed at, its error and its stderr tail.
    const unwell = page.locator('section[data-adapter-id=unwell]');
    const expectedUnwell = (await api('/hecate/v1/agent-adapters/unwell/health')).body.data;
    await unwell.getByRole('button', { name: 'Check health of Unwell fixture' }).click();
    const failed = unwell.locator('.agent-health[data-status=error]');
    await failed.waitFor({ timeout: WAIT });
    assert.equal(await failed.getAttribute('data-stage'), expectedUnwell.stage);
    assert.match(await unwell.getByLabel('stderr of Unwell fixture').textContent(), /unwell: no config file/);
    assert.doesNotMatch(await failed.textContent(), /null/);
    await unwell.scrollIntoViewIfNeeded();
    await shot(page, 'agents-health');
    if (missing) {
      const expected = (await api(`/hecate/v1/agent-adapters/${missing.id}/health`)).body.data;
      const section = page.locator(`section[data-adapter-id=${missing.id}]`);
      await section.getByRole('button', { name: `Check health of ${missing.name}` }).click();
      const status = section.locator(`.agent-health[data-status=${expected.status}]`);
      await status.waitFor({ timeout: WAIT });
      assert.equal(await status.getAttribute('data-stage'), expected.stage);
      assert.match(await status.textContent(), new RegExp(`at stage ${expected.stage}`));
    }
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'Agents page: a live agent process is listed and killed'() {
    const created = await api('/hecate/v1/agent-chat/sessions', {
      method: 'POST',
      body: JSON.stringify({ runtime_kind: 'external_agent', adapter_id: 'fixture', workspace: WS, title: 'Agents page process' }),
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.data.id;
    const said = await api(`/hecate/v1/agent-chat/sessions/${id}/messages`, { method: 'POST', body: JSON.stringify({ content: 'hello' }) });
    assert.equal(said.status, 200, JSON.stringify(said.body));
    const listed = (await api('/hecate/v1/agent-adapters/processes')).body.data.find((p) => p.session_id === id);
    assert.ok(listed, 'the API lists the process');

    const { context, page, errors } = await openPage();
    await page.goto(BASE + '/#/agents');
    const table = page.getByRole('table', { name: 'Agent processes' });
    const row = table.locator(`tr[data-session-id="${id}"]`);
    await row.waitFor({ timeout: WAIT });
    const text = await row.textContent();
    assert.match(text, /Agents page process/);
    assert.match(text, /fixture/);
    assert.match(text, /idle \d/);
    assert.equal(await row.getAttribute('data-pid'), String(listed.pid));
    await row.scrollIntoViewIfNeeded();
    await shot(page, 'agents-processes');
    await row.getByRole('button', { name: 'Kill the process of Agents page process' }).click();
    await row.waitFor({ state: 'detached', timeout: WAIT });
    assert.match(await page.getByRole('alert').filter({ hasText: 'Stopped process' }).textContent(), new RegExp(`Stopped process ${listed.pid}`));
    const after = (await api('/hecate/v1/agent-adapters/processes')).body.data;
    assert.ok(!after.some((p) => p.session_id === id), 'gone from the API too');
    // The chat stays; its next prompt starts a new process, which the page
    // shows on its own (the list is read again on a timer).
    assert.equal((await api(`/hecate/v1/agent-chat/sessions/${id}`)).status, 200);
    const again = await api(`/hecate/v1/agent-chat/sessions/${id}/messages`, { method: 'POST', body: JSON.stringify({ content: 'hello again' }) });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    const relisted = (await api('/hecate/v1/agent-adapters/processes')).body.data.find((p) => p.session_id === id);
    assert.ok(relisted && relisted.pid !== listed.pid, 'a new process');
    await table.locator(`tr[data-session-id="${id}"][data-pid="${relisted.pid}"]`).waitFor({ timeout: WAIT });
    assert.deepEqual(errors, []);
    await context.close();
  },
};
