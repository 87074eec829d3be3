// Drives `hecate acp` with the ACP TypeScript SDK 2.x (`@agentclientprotocol/sdk`
// 2.4.0, installed as `acp-sdk2` by scripts/test-deps/acp-clients.sh): its
// client app (`client().onRequest(...).onNotification(...).connectWith(...)`,
// which replaced 1.x's `ClientSideConnection`) over the stdio of a spawned
// `hecate acp`, through the `/unstable` entrypoint (v1 stable plus the turn's
// `usage` in the prompt response).
//
// Usage: ACP_SDK2_DIR=<npm dir> node ts_sdk2_client.mjs SCENARIO PARAMS_JSON
//
// PARAMS_JSON: {"hecate": BIN, "args": [acp args], "cwd": WORKSPACE, ...} plus
// what the scenario reads. The environment (the Hecate home) passes on to
// `hecate acp`; its stderr goes to ours.
//
// Scenarios (each prints one JSON object of what it saw on stdout):
//   options  initialize, session/new, set_config_option `model` to
//            params.model, set_mode to each of params.modes, one prompt
//   usage    one prompt ("count me"): its response and the usage_updates
//   start    session/new and a prompt of params.prompt; the session id
//   resume   session/resume of params.session (no replay), a prompt of
//            params.prompt, session/close, session/delete when advertised,
//            session/list, then session/resume again (refused)
//   image    a prompt of text and a 1×1 PNG image block
//   elicit   advertises elicitation (form and url), answers every
//            elicitation/create with accept + params.content; a prompt of
//            params.prompt
//
// A failed request is reported as {"error": {code, message, data}} where the
// scenario expects one; any other failure exits non-zero with the reason.

import { spawn } from "node:child_process";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [scenario, raw] = process.argv.slice(2);
const params = JSON.parse(raw);
const entry = path.join(process.env.ACP_SDK2_DIR, "node_modules/acp-sdk2/dist/v1/unstable/acp.js");
const acp = await import(pathToFileURL(entry).href);

/** A 1×1 PNG. */
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** Every session/update notification, in arrival order. */
const updates = [];
/** Every elicitation/create request. */
const elicitations = [];

function errorOf(e) {
  if (e instanceof acp.RequestError || (e && typeof e.code === "number")) {
    return { code: e.code, message: e.message, data: e.data ?? null };
  }
  throw e;
}

/** Runs `request`; answers {result} or {error}. */
async function attempt(request) {
  try {
    return { result: await request() };
  } catch (e) {
    return { error: errorOf(e) };
  }
}

/** The text of the agent message chunks among `list`. */
function agentText(list) {
  return list
    .filter((n) => n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text")
    .map((n) => n.update.content.text)
    .join("");
}

/** Waits briefly so that notifications sent after a response are seen too. */
const settle = () => new Promise((r) => setTimeout(r, 300));

function clientCapabilities() {
  const caps = { fs: { readTextFile: false, writeTextFile: false }, terminal: false };
  if (scenario === "elicit") {
    caps.elicitation = { form: {}, url: {} };
  }
  return caps;
}

async function initialize(ctx) {
  return ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: clientCapabilities(),
    clientInfo: { name: "hecate-ts-sdk2-test", version: "1.0.0" },
  });
}

const newSession = (ctx) =>
  ctx.request(acp.methods.agent.session.new, { cwd: params.cwd, mcpServers: [] });

/** Sends a prompt of `blocks`; answers {result: PromptResponse, text} or {error}. */
async function prompt(ctx, sessionId, blocks) {
  const before = updates.length;
  const r = await attempt(() => ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: blocks }));
  r.text = agentText(updates.slice(before));
  return r;
}

const text = (t) => ({ type: "text", text: t });

const scenarios = {
  async options(ctx) {
    const init = await initialize(ctx);
    const created = await newSession(ctx);
    const sid = created.sessionId;
    const setModel = await attempt(() =>
      ctx.request(acp.methods.agent.session.setConfigOption, {
        sessionId: sid,
        configId: "model",
        value: params.model,
      }),
    );
    const setModes = {};
    for (const mode of params.modes ?? []) {
      setModes[mode] = await attempt(() =>
        ctx.request(acp.methods.agent.session.setMode, { sessionId: sid, modeId: mode }),
      );
    }
    const turn = await prompt(ctx, sid, [text(params.prompt ?? "hello model")]);
    return { initialize: init, newSession: created, setModel, setModes, prompt: turn };
  },

  async usage(ctx) {
    await initialize(ctx);
    const sid = (await newSession(ctx)).sessionId;
    const before = updates.length;
    const turn = await prompt(ctx, sid, [text("count me")]);
    await settle();
    const usageUpdates = updates
      .slice(before)
      .map((n) => n.update)
      .filter((u) => u.sessionUpdate === "usage_update");
    return { prompt: turn, usageUpdates };
  },

  async start(ctx) {
    await initialize(ctx);
    const sid = (await newSession(ctx)).sessionId;
    const turn = await prompt(ctx, sid, [text(params.prompt)]);
    return { sessionId: sid, prompt: turn };
  },

  async resume(ctx) {
    const init = await initialize(ctx);
    const sessionId = params.session;
    const before = updates.length;
    const resumed = await attempt(() =>
      ctx.request(acp.methods.agent.session.resume, { sessionId, cwd: params.cwd, mcpServers: [] }),
    );
    await settle();
    const duringResume = updates.slice(before).map((n) => n.update);
    const turn = await prompt(ctx, sessionId, [text(params.prompt)]);
    const closed = await attempt(() => ctx.request(acp.methods.agent.session.close, { sessionId }));
    const caps = init.agentCapabilities?.sessionCapabilities ?? {};
    const deleted = caps.delete
      ? await attempt(() => ctx.request(acp.methods.agent.session.delete, { sessionId }))
      : null;
    const listed = await attempt(() => ctx.request(acp.methods.agent.session.list, {}));
    const resumedAgain = await attempt(() =>
      ctx.request(acp.methods.agent.session.resume, { sessionId, cwd: params.cwd, mcpServers: [] }),
    );
    return { initialize: init, resumed, duringResume, prompt: turn, closed, deleted, listed, resumedAgain };
  },

  async image(ctx) {
    const init = await initialize(ctx);
    const sid = (await newSession(ctx)).sessionId;
    const turn = await prompt(ctx, sid, [text("describe it"), { type: "image", data: PNG, mimeType: "image/png" }]);
    return { promptCapabilities: init.agentCapabilities?.promptCapabilities ?? null, prompt: turn };
  },

  async elicit(ctx) {
    const init = await initialize(ctx);
    const sid = (await newSession(ctx)).sessionId;
    const turn = await prompt(ctx, sid, [text(params.prompt)]);
    return { initialize: init, sessionId: sid, prompt: turn, elicitations };
  },
};

const run = scenarios[scenario];
if (!run) {
  console.error(`unknown scenario ${scenario}`);
  process.exit(2);
}

const child = spawn(params.hecate, ["acp", ...(params.args ?? [])], {
  cwd: params.cwd,
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const app = acp
  .client({ name: "hecate-ts-sdk2-test" })
  .onNotification(acp.methods.client.session.update, ({ params: n }) => {
    updates.push(n);
  })
  .onRequest(acp.methods.client.elicitation.create, ({ params: request }) => {
    elicitations.push(request);
    return { action: "accept", content: params.content ?? {} };
  });

const report = await app.connectWith(stream, run);
child.stdin.end();
report.hecateExit = await exited;
process.stdout.write(`${JSON.stringify(report)}\n`);
