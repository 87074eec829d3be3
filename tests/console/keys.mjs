// The team's browser scenarios, on the server that wants a token. Keys: an admin
// creates a key (a bad scope first, refused in the form), sees its token once,
// the key works against the API with its role, a key without the admin role is
// refused the page, and a revoked key stops working. Sign-ins: the MCP page
// shows an upstream's stored OAuth sign-in (never its tokens) and signs out.

import assert from 'node:assert/strict';
import { GUARDED, TOKEN, WAIT, openPage, shot } from './harness.mjs';

/** The status of `method` `path` on the guarded server with `token`. */
async function statusWith(token, path, method = 'GET') {
  const res = await fetch(GUARDED + path, { method, headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return res.status;
}

/** Opens `hash` on the guarded server and answers the token dialog with `token`. */
async function signedIn(token, hash, allowed) {
  const opened = await openPage(allowed);
  await opened.page.goto(GUARDED + '/' + hash);
  const dialog = opened.page.getByRole('dialog', { name: 'Access token' });
  await dialog.waitFor({ timeout: WAIT });
  await dialog.getByLabel('Access token').fill(token);
  await dialog.getByRole('button', { name: 'Save token' }).click();
  return opened;
}

export const scenarios = {
  async 'keys are created with their token shown once, refused with the field to fix, and revoked'() {
    const name = `ci-bot-${Date.now()}`;
    const { context, page, errors } = await signedIn(TOKEN, '#/keys', [/401/, /400/]);
    await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor({ timeout: WAIT });
    await page.getByRole('link', { name: 'Keys' }).and(page.locator('[aria-current=page]')).waitFor();

    // A scope item nobody knows: the form says which and keeps what was typed.
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Role').selectOption('operator');
    await page.getByLabel('Limit to').fill('boss');
    await page.getByRole('button', { name: 'Create key' }).click();
    const formAlert = page.locator('form[aria-labelledby=key-form-title] [role=alert]');
    await formAlert.filter({ hasText: /unknown scope item "boss"/ }).waitFor({ timeout: WAIT });
    assert.equal(await page.evaluate(() => document.activeElement.labels[0].textContent), 'Limit to');
    assert.equal(await page.getByLabel('Name').inputValue(), name);

    await page.getByLabel('Limit to').fill('namespace:default');
    await page.getByLabel('Expires in').fill('30d');
    await page.getByRole('button', { name: 'Create key' }).click();
    const fresh = page.getByRole('region', { name: 'New key' });
    await fresh.waitFor({ timeout: WAIT });
    const token = await fresh.getByRole('textbox').inputValue();
    assert.match(token, /^key_[0-9a-f]+\.[0-9a-f]+$/);
    const keys = page.getByRole('list', { name: 'Keys' });
    const item = keys.getByRole('listitem').filter({ hasText: name });
    await item.waitFor({ timeout: WAIT });
    const text = await item.textContent();
    assert.match(text, /operator/);
    assert.match(text, /active/);
    assert.match(text, /namespace:default/);
    assert.match(text, /expires/);
    assert.match(text, /never used/);
    await shot(page, 'keys');

    // The key works with its role: an operator may list sessions, not keys.
    assert.equal(await statusWith(token, '/hecate/v1/agent-chat/sessions'), 200);
    assert.equal(await statusWith(token, '/hecate/v1/keys'), 403);
    assert.equal(await statusWith(token, '/hecate/v1/mcp/servers/team/sign-in', 'DELETE'), 403);

    // Signed in with it, the Keys page shows the refusal instead of a list.
    const other = await signedIn(token, '#/keys', [/401/, /403/]);
    await other.page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor({ timeout: WAIT });
    await other.page.locator('main > [role=alert]').filter({ hasText: /may not/ }).waitFor({ timeout: WAIT });
    assert.equal(await other.page.getByRole('list', { name: 'Keys' }).getByRole('listitem').count(), 0);
    assert.deepEqual(other.errors, []);
    await other.context.close();

    // Revoked, it stays listed as revoked and stops working.
    await item.getByRole('button', { name: 'Revoke' }).click();
    await keys.getByRole('listitem').filter({ hasText: name }).filter({ hasText: 'revoked' }).waitFor({ timeout: WAIT });
    assert.equal(await keys.getByRole('listitem').filter({ hasText: name }).getByRole('button').count(), 0);
    assert.equal(await statusWith(token, '/hecate/v1/agent-chat/sessions'), 401);

    // The token is forgotten once the page is left: nothing on the page or in
    // the browser's storage holds it (the check sees it while it is shown).
    const holding = () => page.evaluate((t) => [...document.querySelectorAll('input')].some((i) => i.value === t)
      || JSON.stringify(sessionStorage).includes(t) || JSON.stringify(localStorage).includes(t), token);
    assert.ok(await holding(), 'the box holds the token while the page is open');
    await page.getByRole('link', { name: 'Grants' }).click();
    await page.getByRole('heading', { name: 'Grants' }).waitFor();
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
    assert.equal(await page.getByRole('region', { name: 'New key' }).count(), 0);
    assert.ok(!(await holding()), 'the token is gone from the page and the storage');
    assert.deepEqual(errors, []);
    await context.close();
  },

  async 'the MCP page shows an upstream sign-in without its tokens and signs out'() {
    const { context, page, errors } = await signedIn(TOKEN, '#/mcp', [/401/]);
    const team = page.getByRole('region', { name: 'team' });
    const line = team.locator('.sign-in');
    await line.and(page.locator('[data-sign-in=signed_in]')).waitFor({ timeout: WAIT });
    const text = await line.textContent();
    assert.match(text, /Signed in with https:\/\/issuer\.example/);
    assert.match(text, /access token expires/);
    assert.match(text, /renewed with its refresh token/);
    assert.ok(!(await page.content()).includes('secret-'), 'no token reaches the page');
    await shot(page, 'mcp-sign-in');
    await team.getByRole('button', { name: 'Sign out of team' }).click();
    await team.locator('.sign-in[data-sign-in=missing]').waitFor({ timeout: WAIT });
    assert.match(await team.locator('.sign-in').textContent(), /Not signed in: run hecate mcp login team/);
    const res = await fetch(GUARDED + '/hecate/v1/mcp/servers', { headers: { authorization: `Bearer ${TOKEN}` } });
    const row = (await res.json()).data.find((s) => s.name === 'team');
    assert.equal(row.sign_in.state, 'missing');

    // A sign-in that cannot be read says so, and signing out clears it.
    const vault = page.getByRole('region', { name: 'vault' });
    const damaged = vault.locator('.sign-in[data-sign-in=unreadable]');
    await damaged.waitFor({ timeout: WAIT });
    assert.match(await damaged.textContent(), /could not be read .*not readable/);
    assert.ok(!(await page.content()).includes('secret-'), 'what is stored is never quoted');
    await vault.getByRole('button', { name: 'Sign out of vault' }).click();
    await vault.locator('.sign-in[data-sign-in=missing]').waitFor({ timeout: WAIT });
    assert.deepEqual(errors, []);
    await context.close();
  },
};
