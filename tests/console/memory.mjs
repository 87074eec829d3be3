// The Memory page's browser scenario, on a server with recall (the fixture
// model's deterministic embeddings) and client-hosted flow agents, one of them
// broken (HECATE_MEMORY_URL): a message of a chat is found by meaning and links
// to its chat; the loaded agent lists its chats; the broken file shows its error.

import assert from 'node:assert/strict';
import { WAIT, figures, openPage, shot } from './harness.mjs';

const MEMORY = process.env.HECATE_MEMORY_URL;

async function call(path, body) {
  const res = await fetch(MEMORY + path, {
    method: body ? 'POST' : 'GET',
    headers: { 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

export const scenarios = {
  async 'the Memory page finds a message by meaning and lists flow agents, their chats and broken files'() {
    const session = await call('/hecate/v1/agent-chat/sessions', { model: 'fix/fixture-model', title: 'Llamas' });
    assert.equal(session.status, 200, JSON.stringify(session.body));
    const id = session.body.data.id;
    const said = await call(`/hecate/v1/agent-chat/sessions/${id}/messages`, { content: 'the llama eats blue grass on the hill' });
    assert.equal(said.status, 200, JSON.stringify(said.body));
    // Indexing is asynchronous: wait until the API finds it (a hang guard).
    for (let i = 0; ; i += 1) {
      const found = await call(`/hecate/v1/memory/search?query=${encodeURIComponent('llama grass hill')}`);
      if (found.body.data.results.some((r) => r.session_id === id)) break;
      assert.ok(i < 200, `never indexed: ${JSON.stringify(found.body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const chat = await call('/hecate/v1/chats', { agentId: 'support' });
    assert.equal(chat.status, 200, JSON.stringify(chat.body));

    const { context, page, errors } = await openPage();
    await page.goto(MEMORY + '/#/memory');
    await page.locator('.run-status[data-state=ready]').waitFor({ timeout: WAIT });
    figures.memory_first_render_ms = await page.evaluate(() => Math.round(performance.now()));
    const search = page.getByRole('search', { name: 'Search memory' });
    await search.getByLabel('Search memory').fill('llama grass hill');
    await search.getByRole('button', { name: 'Search' }).click();
    const hit = page.getByRole('list', { name: 'Recalled messages' }).locator(`li[data-session-id="${id}"]`).first();
    await hit.waitFor({ timeout: WAIT });
    assert.match(await hit.textContent(), /llama eats blue grass/);

    const agent = page.locator('section[data-agent-id=support]');
    await agent.getByRole('button', { name: /Show chats with/ }).click();
    const rows = agent.getByRole('table').locator(`tr[data-chat-id="${chat.body.data.chatId}"]`);
    await rows.waitFor({ timeout: WAIT });
    const broken = page.getByRole('list', { name: 'Flow files that did not load' }).locator('li[data-agent-id=broken]');
    assert.match(await broken.textContent(), /broken\.toml/);
    await shot(page, 'memory');

    await hit.getByRole('link').click();
    await page.waitForURL(new RegExp(`#/chats/${id}`));
    await page.getByRole('heading', { name: 'Llamas' }).waitFor({ timeout: WAIT });
    assert.deepEqual(errors, []);
    await context.close();
  },
};
