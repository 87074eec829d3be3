// Drives `hecate serve` (with a token) with the official JavaScript SDK
// (`@a2a-js/sdk`, pinned by scripts/test-deps/a2a.sh): over each binding,
// starts a task without waiting for it, creates a push notification config
// for it pointing at the test's webhook receiver, gets and lists it, waits
// until the receiver got the task's completion, deletes the config and lists
// none; then reads the authenticated extended card with the token, and sees
// the SDK fail without it.
//
// Usage: A2A_JS_DIR=<npm dir> node a2a_js_push_client.mjs BASE_URL WORKSPACE TOKEN WEBHOOK
//
// WEBHOOK is the receiver's base URL: notifications go to WEBHOOK/<binding>,
// and GET WEBHOOK/<binding> answers the bodies it was posted so far. Prints
// one JSON object (what it saw) on stdout; exits non-zero with the reason on
// the first expectation that does not hold.

import { randomUUID } from "node:crypto";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [base, ws, token, webhook] = process.argv.slice(2);
const sdk = path.join(process.env.A2A_JS_DIR, "node_modules/@a2a-js/sdk/dist");
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } =
  await import(pathToFileURL(path.join(sdk, "client/index.js")).href);
const { Role, TaskState } = await import(pathToFileURL(path.join(sdk, "index.js")).href);

const NOTIFICATION_TOKEN = "js-webhook-token";
const ACCESS_EXTENSION = "urn:hecate:a2a:access:v1";

function expect(cond, what) {
  if (!cond) {
    console.error(`expectation failed: ${what}`);
    process.exit(1);
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `fetch` sending the server's token. */
function withToken(url, init = {}) {
  const headers = new Headers(init.headers ?? {});
  headers.set("Authorization", `Bearer ${token}`);
  return fetch(url, { ...init, headers });
}

/** A client of the default agent over `binding`, fetching with `fetchImpl`. */
async function client(binding, fetchImpl, polling) {
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    preferredTransports: [binding],
    clientConfig: { polling },
  });
  return new ClientFactory(options).createFromUrl(base);
}

function request(text) {
  return {
    tenant: "",
    message: {
      messageId: randomUUID(),
      contextId: "",
      taskId: "",
      role: Role.ROLE_USER,
      parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }],
      metadata: { workspace: ws },
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  };
}

function configsOf(listed) {
  return Array.isArray(listed) ? listed : (listed?.configs ?? []);
}

/** Waits until the receiver at `url` got the completion of `taskId`. */
async function untilCompleted(url, taskId) {
  for (let i = 0; i < 400; i++) {
    const posts = await (await fetch(url)).json();
    const done = posts.some(
      (p) => p?.statusUpdate?.taskId === taskId && p.statusUpdate.status?.state === "TASK_STATE_COMPLETED",
    );
    if (done) return posts.length;
    await sleep(50);
  }
  expect(false, `the webhook at ${url} never got the completion of ${taskId}`);
}

const report = { push: {}, extended: {} };

for (const [binding, name] of [["JSONRPC", "jsonrpc"], ["HTTP+JSON", "rest"]]) {
  const c = await client(binding, withToken, true);
  const started = await c.sendMessage(request(`push over ${binding}`));
  expect("status" in started, `${binding}: a task came back: ${JSON.stringify(started)}`);
  expect(started.status.state === TaskState.TASK_STATE_WORKING, `${binding}: working at once`);
  const url = `${webhook}/${name}`;
  const config = {
    tenant: "",
    id: `js-${name}`,
    taskId: started.id,
    url,
    token: NOTIFICATION_TOKEN,
    authentication: undefined,
  };
  const created = await c.createTaskPushNotificationConfig(config);
  expect(created.id === config.id && created.url === url, `${binding}: created ${JSON.stringify(created)}`);
  expect(created.taskId === started.id, `${binding}: created for the task`);
  const got = await c.getTaskPushNotificationConfig({ tenant: "", taskId: started.id, id: config.id });
  expect(got.url === url && got.token === NOTIFICATION_TOKEN, `${binding}: got ${JSON.stringify(got)}`);
  const listed = configsOf(
    await c.listTaskPushNotificationConfig({ tenant: "", taskId: started.id, pageSize: 0, pageToken: "" }),
  );
  expect(listed.length === 1 && listed[0].id === config.id, `${binding}: listed ${JSON.stringify(listed)}`);
  const posts = await untilCompleted(url, started.id);
  await c.deleteTaskPushNotificationConfig({ tenant: "", taskId: started.id, id: config.id });
  const after = configsOf(
    await c.listTaskPushNotificationConfig({ tenant: "", taskId: started.id, pageSize: 0, pageToken: "" }),
  );
  expect(after.length === 0, `${binding}: none left after the delete: ${JSON.stringify(after)}`);
  report.push[binding] = { task: started.id, config: config.id, posts };
}

// The extended card: `getAgentCard` fetches it when the card offers it.
for (const binding of ["JSONRPC", "HTTP+JSON"]) {
  const c = await client(binding, withToken, false);
  const card = await c.getAgentCard();
  expect(card.capabilities?.extendedAgentCard === true, `${binding}: the card offers the extended card`);
  const ids = card.skills.map((s) => s.id);
  expect(ids.some((id) => id.startsWith("hecate:fix/") && id.includes("#")), `${binding}: other agents' skills in ${ids}`);
  const access = (card.capabilities.extensions ?? []).find((e) => e.uri === ACCESS_EXTENSION);
  expect(access?.params?.identity === "admin", `${binding}: served to ${JSON.stringify(access)}`);
  const anonymous = await client(binding, fetch, false);
  let refused;
  try {
    await anonymous.getAgentCard();
  } catch (e) {
    refused = String(e?.message ?? e);
  }
  expect(refused !== undefined, `${binding}: the extended card needs the token`);
  // JSON-RPC reports the HTTP status, HTTP+JSON the error body's message.
  expect(
    refused.includes("401") || refused.includes("Authorization header is missing"),
    `${binding}: refused for the credential: ${refused}`,
  );
  report.extended[binding] = { skills: ids, refused };
}

console.log(JSON.stringify(report));
