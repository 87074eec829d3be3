#!/usr/bin/env node
// `tools/call` echo benchmark with the official MCP TypeScript SDK client.
//
// Usage: node bench.mjs CONFIG.json      (or the JSON on stdin with `-` / no argument)
//
// CONFIG:
//   {
//     "node_modules": "/abs/path/to/node_modules",   // holds @modelcontextprotocol/sdk
//     "calls": 2000,                                   // sequential calls per target
//     "clients": 8,                                    // concurrent clients per target
//     "warmup": 50,                                    // untimed calls first
//     "rounds": 10,                                    // interleaved rounds of the sequential calls
//     "targets": [
//       {"name": "direct_stdio", "tool": "echo",
//        "stdio": {"command": "node", "args": ["server.js", "stdio"], "env": {"K": "V"}}},
//       {"name": "some_http", "tool": "echo", "url": "http://127.0.0.1:PORT/mcp"}
//     ]
//   }
//
// Sequential figures: one connection per target, each runs `warmup` untimed
// calls; then `calls` sequential calls per target are made in `rounds`
// interleaved rounds (every target gets a slice each round, so the client's JIT
// warming up during the run favours none of them): median and p99 latency in µs,
// calls/s. Then per target, `clients` connections (each its own transport: its
// own child process on stdio, its own session over HTTP) are opened, each runs a
// short untimed warm-up, and together they run `calls` calls split evenly
// (aggregate calls/s). Connection set-up is never timed. Prints one JSON object on stdout:
//   {"sdk": "@modelcontextprotocol/sdk", "sdk_version": "...", "node": "v22...",
//    "calls": N, "clients": C,
//    "results": {NAME: {"median_us", "p99_us", "calls_per_s", "concurrent_calls_per_s"}}}
// Exits 1 (message on stderr) when any target fails.

import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

function readConfig() {
  const arg = process.argv[2];
  const text = !arg || arg === "-" ? readFileSync(0, "utf8") : readFileSync(arg, "utf8");
  return JSON.parse(text);
}

const config = readConfig();
const here = dirname(fileURLToPath(import.meta.url));
const nodeModules = resolve(
  config.node_modules ?? join(here, "../../target/test-deps/mcp/npm/node_modules"),
);
const sdkDir = join(nodeModules, "@modelcontextprotocol/sdk");
const load = (rel) => import(pathToFileURL(join(sdkDir, "dist/esm", rel)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
const sdkVersion = JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8")).version;

const calls = Math.max(1, Number(config.calls ?? 2000));
const clients = Math.max(1, Number(config.clients ?? 8));
const warmup = Math.max(0, Number(config.warmup ?? 50));
const rounds = Math.max(1, Number(config.rounds ?? 10));

/** Opens one client connection to a target. */
async function connect(target) {
  const client = new Client({ name: "hecate-bench-ts", version: "1.0.0" }, { capabilities: {} });
  let transport;
  if (target.url) {
    transport = new StreamableHTTPClientTransport(new URL(target.url));
  } else if (target.stdio) {
    transport = new StdioClientTransport({
      command: target.stdio.command,
      args: target.stdio.args ?? [],
      env: target.stdio.env ?? {},
      stderr: "ignore",
    });
  } else {
    throw new Error(`target ${target.name}: neither url nor stdio`);
  }
  await client.connect(transport);
  return { client, transport };
}

/** Closes a connection; an HTTP session is terminated first (DELETE). */
async function disconnect({ client, transport }) {
  if (typeof transport.terminateSession === "function") {
    try {
      await transport.terminateSession();
    } catch {
      // A server that does not support DELETE answers 405; nothing to clean up.
    }
  }
  await client.close();
}

async function echo(client, tool, i) {
  const r = await client.callTool({ name: tool, arguments: { message: `m${i}` } });
  if (r.isError) {
    throw new Error(`${tool} returned an error: ${JSON.stringify(r.content)}`);
  }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  const idx = Math.round((sorted.length - 1) * p);
  return sorted[Math.min(idx, sorted.length - 1)];
}

/** Sorted latencies (µs) and the wall time (s) they took, as the report's figures. */
function figures(lat, wall) {
  lat.sort((a, b) => a - b);
  return {
    median_us: Math.round(percentile(lat, 0.5)),
    p99_us: Math.round(percentile(lat, 0.99)),
    calls_per_s: Math.round(lat.length / wall),
  };
}

/**
 * Sequential figures of every target, measured in interleaved rounds over one
 * connection each: the client's JIT keeps warming during a run, so measuring
 * the targets one after the other would favour whichever comes last.
 */
async function sequentialAll(targets) {
  const conns = [];
  try {
    for (const target of targets) {
      const conn = await connect(target).catch((e) => {
        throw new Error(`target ${target.name}: ${e?.stack ?? e}`);
      });
      conns.push({ target, conn, tool: target.tool ?? "echo", lat: [], wall: 0 });
    }
    for (const c of conns) {
      for (let i = 0; i < warmup; i++) {
        await echo(c.conn.client, c.tool, i).catch((e) => {
          throw new Error(`target ${c.target.name} (warm-up): ${e?.stack ?? e}`);
        });
      }
    }
    const slices = Math.max(1, Math.min(rounds, calls));
    for (let r = 0; r < slices; r++) {
      for (const c of conns) {
        const n = Math.floor(calls / slices) + (r < calls % slices ? 1 : 0);
        const start = performance.now();
        for (let i = 0; i < n; i++) {
          const t = performance.now();
          await echo(c.conn.client, c.tool, i).catch((e) => {
            throw new Error(`target ${c.target.name}: ${e?.stack ?? e}`);
          });
          c.lat.push((performance.now() - t) * 1000);
        }
        c.wall += (performance.now() - start) / 1000;
      }
    }
    return Object.fromEntries(conns.map((c) => [c.target.name, figures(c.lat, c.wall)]));
  } finally {
    await Promise.all(conns.map((c) => disconnect(c.conn).catch(() => {})));
  }
}

/** Calls per second of `clients` connections to one target sharing `calls` calls. */
async function concurrentRate(target) {
  const tool = target.tool ?? "echo";
  const conns = await Promise.all(Array.from({ length: clients }, () => connect(target)));
  try {
    const per = Math.max(1, Math.floor(calls / clients));
    const warm = Math.min(warmup, 10);
    await Promise.all(
      conns.map(async ({ client }) => {
        for (let i = 0; i < warm; i++) await echo(client, tool, i);
      }),
    );
    const start = performance.now();
    await Promise.all(
      conns.map(async ({ client }) => {
        for (let i = 0; i < per; i++) await echo(client, tool, i);
      }),
    );
    const wall = (performance.now() - start) / 1000;
    return Math.round((per * conns.length) / wall);
  } finally {
    await Promise.all(conns.map((c) => disconnect(c).catch(() => {})));
  }
}

let results;
try {
  const targets = config.targets ?? [];
  results = await sequentialAll(targets);
  for (const target of targets) {
    try {
      results[target.name].concurrent_calls_per_s = await concurrentRate(target);
    } catch (e) {
      throw new Error(`target ${target.name}: ${e?.stack ?? e}`);
    }
  }
} catch (e) {
  process.stderr.write(`${e?.message ?? e}\n`);
  process.exit(1);
}
process.stdout.write(
  `${JSON.stringify({
    sdk: "@modelcontextprotocol/sdk",
    sdk_version: sdkVersion,
    node: process.version,
    calls,
    clients,
    results,
  })}\n`,
);
process.exit(0);
