// Drives `hecate serve` as an A2A 1.0 server with the official JavaScript SDK
// (`@a2a-js/sdk`, pinned by scripts/test-deps/a2a.sh): resolves the default
// agent's card, sends a message (blocking) and streams another.
//
// Usage: A2A_JS_DIR=<npm dir> node a2a_js_client.mjs BASE_URL WORKSPACE
//
// Prints one JSON object (what it saw) on stdout; exits non-zero with the
// reason on the first expectation that does not hold.

import { randomUUID } from "node:crypto";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [base, ws] = process.argv.slice(2);
const sdk = path.join(process.env.A2A_JS_DIR, "node_modules/@a2a-js/sdk/dist");
const { ClientFactory } = await import(pathToFileURL(path.join(sdk, "client/index.js")).href);
const { Role, TaskState } = await import(pathToFileURL(path.join(sdk, "index.js")).href);

function expect(cond, what) {
  if (!cond) {
    console.error(`expectation failed: ${what}`);
    process.exit(1);
  }
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

function text(artifact) {
  const part = artifact?.parts?.[0];
  return part?.content?.$case === "text" ? part.content.value : undefined;
}

const client = await new ClientFactory().createFromUrl(base);
const report = {};

const sent = await client.sendMessage(request("hello from JavaScript"));
expect("status" in sent, `a task came back: ${JSON.stringify(sent)}`);
expect(sent.status.state === TaskState.TASK_STATE_COMPLETED, `completed: ${JSON.stringify(sent)}`);
expect(text(sent.artifacts[0]) === "JS send.", `answer ${text(sent.artifacts[0])}`);
report.send = { id: sent.id, contextId: sent.contextId };

const kinds = [];
let final;
let streamed;
for await (const event of client.sendMessageStream(request("stream from JavaScript"))) {
  const kind = event.payload?.$case;
  kinds.push(kind);
  if (kind === "statusUpdate") final = event.payload.value.status.state;
  if (kind === "artifactUpdate") streamed = text(event.payload.value.artifact);
}
expect(kinds[0] === "task", `the stream starts with the task: ${kinds}`);
expect(final === TaskState.TASK_STATE_COMPLETED, `the stream ends completed: ${kinds}`);
expect(streamed === "JS stream.", `streamed answer ${streamed}`);
report.stream = kinds;
console.log(JSON.stringify(report));
