// The MCP page's browser scenarios: an upstream tool set to `block` in the page
// leaves the list a real MCP client gets over Streamable HTTP; a call made by
// that client shows in the audit log; a probe of the fixture MCP server lists
// its tools. The open server has `[mcp_servers.fx]`, the fixture MCP server.

import assert from 'node:assert/strict';
import { BASE, WAIT, figures, openPage, shot } from './harness.mjs';
import { createParser } from '../../console/vendor/eventsource-parser/parse.js';

/** A minimal MCP client over Streamable HTTP (JSON-RPC in, JSON or SSE out). */
async function mcpSession() {
  let session = null;
  let id = 0;
  async function send(method, params, notification = false) {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
    if (session) headers['mcp-session-id'] = session;
    const body = notification ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', id: ++id, method, params };
    const res = await fetch(`${BASE}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
    session = res.headers.get('mcp-session-id') || session;
    if (notification) return null;
    const text = await res.text();
    let json = null;
    if ((res.headers.get('content-type') || '').includes('text/event-stream')) {
      const messages = [];
      createParser({ onEvent: (e) => { if (e.data) messages.push(JSON.parse(e.data)); } }).feed(text);
      json = messages.find((m) => m.id === body.id);
    } else {
      json = JSON.parse(text);
    }
    assert.ok(json && !json.error, `${method}: ${text}`);
    return json.result;
  }
  await send('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'console-test', version: '1' } });
  await send('notifications/initialized', {}, true);
  return {
    tools: async () => (await send('tools/list', {})).tools.map((t) => t.name),
    call: (name, args) => send('tools/call', { name, arguments: args }),
  };
}

export const scenarios = {
  async 'an MCP tool set to block in the MCP page leaves a real client\'s list, and calls are audited'() {
    const client = await mcpSession();
    assert.ok((await client.tools()).includes('fx__echo'));
    const echoed = await client.call('fx__echo', { message: 'audited' });
    assert.equal(echoed.content[0].text, 'audited');

    const { context, page, errors } = await openPage();
    await page.goto(BASE + '/#/mcp');
    const tools = page.getByRole('table', { name: 'Tools of fx' });
    await tools.waitFor({ timeout: WAIT });
    figures.mcp_first_render_ms = await page.evaluate(() => Math.round(performance.now()));
    const echo = tools.locator('tr[data-tool=echo]');
    assert.match(await echo.textContent(), /fx__echo/);
    const log = page.getByRole('table', { name: 'MCP calls' });
    await log.locator('tr[data-outcome=ok]').first().waitFor();
    assert.match(await log.locator('tbody tr').first().textContent(), /console-test.*fx__echo.*auto.*allowed.*ok/);

    await tools.getByRole('combobox', { name: 'Policy for echo' }).selectOption('block');
    await tools.locator('tr[data-tool=echo][data-policy=block]').waitFor({ timeout: WAIT });
    assert.match(await tools.locator('tr[data-tool=echo]').textContent(), /hidden from clients/);
    const after = await client.tools();
    assert.ok(!after.includes('fx__echo'), `blocked: ${after}`);
    assert.ok(after.includes('fx__test_simple_text'), 'the other tools stay');
    await shot(page, 'mcp');

    // Allowed again from the page, it is back for clients.
    await tools.getByRole('combobox', { name: 'Policy for echo' }).selectOption('auto');
    await tools.locator('tr[data-tool=echo][data-policy=auto]').waitFor({ timeout: WAIT });
    assert.ok((await client.tools()).includes('fx__echo'));
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'the MCP page probes a server that is not configured'() {
    const { context, page, errors } = await openPage();
    await page.goto(BASE + '/#/mcp');
    const form = page.getByRole('form', { name: 'Probe a server' });
    await form.getByLabel('Command (stdio)').fill(`${process.env.HECATE_FIXTURES} mcp-server`);
    await form.getByRole('button', { name: 'Probe' }).click();
    const probed = form.getByRole('list', { name: 'Probed tools' });
    await probed.locator('li').first().waitFor({ timeout: WAIT });
    const names = await probed.locator('code').allTextContents();
    assert.ok(names.includes('echo') && names.includes('test_simple_text'), names.join(', '));
    assert.deepEqual(errors, []);
    await context.close();
  },
};
