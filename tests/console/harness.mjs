// What every browser scenario shares: the servers' addresses from the
// environment, one Chromium, the API helper, pages whose browser errors are
// collected, screenshots, the figures, and the runner.

import { existsSync } from 'node:fs';
import { join } from 'node:path';

for (const [what, path] of [['playwright-core', process.env.PLAYWRIGHT], ["Debian's Chromium", '/usr/bin/chromium']]) {
  if (!path || !existsSync(path)) {
    console.log(`${what} is missing (${path}): run ./scripts/test-deps/console.sh`);
    process.exit(2);
  }
}
const { chromium } = await import(process.env.PLAYWRIGHT);
export const BASE = process.env.HECATE_URL;
export const GUARDED = process.env.HECATE_GUARDED_URL;
export const TOKEN = process.env.HECATE_TOKEN;
export const WS = process.env.WORKSPACE;
export const SHOTS = process.env.SHOTS;
export const WAIT = 20000;

export const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

export const figures = {};

/** JSON from the API of the open server. */
export async function api(path, init = {}) {
  const res = await fetch(BASE + path, {
    ...init,
    headers: { 'content-type': 'application/json', ...(init.headers || {}) },
  });
  const body = await res.json().catch(() => null);
  return { status: res.status, body };
}

export async function sessionCount() {
  return (await api('/hecate/v1/agent-chat/sessions?limit=1000')).body.data.length;
}

/** A fresh page whose console errors and page errors are collected; `allowed`
 * matches errors the scenario expects (the browser logs every 4xx fetch). */
export async function openPage(allowed = []) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !allowed.some((re) => re.test(m.text()))) errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => { errors.push(`dialog: ${d.message()}`); d.dismiss(); });
  opened.push({ context, page, errors });
  return { context, page, errors };
}

/** The pages the running scenario opened: on a failure their browser errors are
 * printed, the last one is screenshot, and all are closed. */
let opened = [];

export async function shot(page, name) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
}


/** Runs every scenario (those whose name contains ONLY when it is set), prints
 * each outcome and the figures, and exits non-zero when one failed. */
export async function runAll(scenarios) {
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
    for (const { errors } of opened) {
      if (errors.length) console.log(`     browser errors: ${JSON.stringify(errors)}`);
    }
    const last = opened[opened.length - 1];
    if (last) await last.page.screenshot({ path: join(SHOTS, `failed-${failed}.png`) }).catch(() => {});
  }
  for (const { context } of opened) await context.close().catch(() => {});
  opened = [];
}
await browser.close();
console.log(`figures ${JSON.stringify(figures)}`);
if (failed) {
  console.log(`${failed} scenario(s) failed`);
  process.exit(1);
}
console.log('all scenarios passed');
}
