// The API client: JSON calls to /hecate/v1 and /v1 with the stored bearer token,
// the 401 -> "Access token" dialog -> retry loop, and error envelopes as ApiError.

import { askForToken, getToken, tokenPrompt } from './token-dialog.js';

/** An API failure; `envelope` is the `error` object of the answer when there is one. */
export class ApiError extends Error {
  constructor(status, envelope, message) {
    super(message || (envelope && (envelope.message || envelope.type)) || `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.envelope = envelope || null;
    this.type = envelope ? envelope.type : null;
  }
}

/** Headers with Authorization when a token is stored. */
export function authHeaders(extra = {}) {
  const headers = { ...extra };
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  return headers;
}

/** Builds a path with a query string from an object (undefined/empty values skipped). */
export function withQuery(path, query) {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/**
 * fetch() with the token; on 401 asks for a token and retries. Answers the
 * Response (any status other than 401 once the operator gave up).
 */
export async function authorizedFetch(path, init = {}) {
  for (let attempt = 0; ; attempt += 1) {
    // While the dialog asks, wait for its answer instead of collecting more 401s.
    const asking = tokenPrompt();
    if (asking) await asking;
    const sent = getToken();
    const res = await fetch(path, { ...init, headers: authHeaders(init.headers || {}), credentials: 'same-origin' });
    if (res.status !== 401 || attempt >= 5) return res;
    // Another request's dialog changed the token while this one was out: retry with it.
    if (getToken() !== sent) continue;
    const token = await askForToken(Boolean(sent));
    if (!token) return res;
  }
}

async function readError(res) {
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  const env = body && typeof body.error === 'object' ? body.error : null;
  return new ApiError(res.status, env, env ? undefined : `${res.status} ${res.statusText}`);
}

/** A JSON request; answers the parsed body or throws ApiError. */
export async function request(method, path, { body, query, signal } = {}) {
  const init = { method, signal, headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers['Content-Type'] = 'application/json';
  }
  let res;
  try {
    res = await authorizedFetch(withQuery(path, query), init);
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiError(0, null, `The server could not be reached (${err && err.message ? err.message : err}).`);
  }
  if (!res.ok) throw await readError(res);
  if (res.status === 204) return null;
  try {
    return await res.json();
  } catch {
    return null;
  }
}

export const get = (path, opts) => request('GET', path, opts);
export const post = (path, body, opts = {}) => request('POST', path, { ...opts, body: body === undefined ? {} : body });
export const del = (path, opts) => request('DELETE', path, opts);

/** Whether an error is an abort (a view went away); such errors are ignored. */
export function isAbort(err) {
  return err && err.name === 'AbortError';
}

const S = '/hecate/v1/agent-chat/sessions';
export const enc = encodeURIComponent;
/** Paths of the Agent Chat API. */
export const paths = {
  sessions: S,
  session: (id) => `${S}/${enc(id)}`,
  messages: (id) => `${S}/${enc(id)}/messages`,
  cancel: (id) => `${S}/${enc(id)}/cancel`,
  stream: (id) => `${S}/${enc(id)}/stream`,
  approvals: (id) => `${S}/${enc(id)}/approvals`,
  resolve: (id, a) => `${S}/${enc(id)}/approvals/${enc(a)}/resolve`,
  files: (id, m) => `${S}/${enc(id)}/messages/${enc(m)}/files`,
  fileDiff: (id, m, p) => `${S}/${enc(id)}/messages/${enc(m)}/files/${enc(p)}`,
  revert: (id, m) => `${S}/${enc(id)}/messages/${enc(m)}/revert`,
  grants: '/hecate/v1/agent-chat/grants',
  grant: (g) => `/hecate/v1/agent-chat/grants/${enc(g)}`,
  keys: '/hecate/v1/keys',
  key: (k) => `/hecate/v1/keys/${enc(k)}`,
  taskResolve: (t, a) => `/hecate/v1/tasks/${enc(t)}/approvals/${enc(a)}/resolve`,
  tasks: '/hecate/v1/tasks',
  task: (t) => `/hecate/v1/tasks/${enc(t)}`,
  taskStart: (t) => `/hecate/v1/tasks/${enc(t)}/start`,
  taskRuns: (t) => `/hecate/v1/tasks/${enc(t)}/runs`,
  runAction: (t, r, action) => `/hecate/v1/tasks/${enc(t)}/runs/${enc(r)}/${action}`,
  runStream: (t, r) => `/hecate/v1/tasks/${enc(t)}/runs/${enc(r)}/stream`,
  patch: (t, r, a) => `/hecate/v1/tasks/${enc(t)}/runs/${enc(r)}/patches/${enc(a)}`,
  patchAction: (t, r, a, action) => `/hecate/v1/tasks/${enc(t)}/runs/${enc(r)}/patches/${enc(a)}/${action}`,
  mcpServers: '/hecate/v1/mcp/servers',
  mcpSignIn: (s) => `/hecate/v1/mcp/servers/${enc(s)}/sign-in`,
  mcpToolPolicy: (s, t) => `/hecate/v1/mcp/servers/${enc(s)}/tools/${enc(t)}/policy`,
  mcpCalls: '/hecate/v1/mcp/calls',
  mcpCache: '/hecate/v1/system/mcp/cache',
  mcpProbe: '/hecate/v1/mcp/probe',
  memorySearch: '/hecate/v1/memory/search',
  memoryStatus: '/hecate/v1/memory/status',
  flows: '/hecate/v1/flows',
  flowChats: (a) => `/hecate/v1/flows/${enc(a)}/chats`,
  eventsStream: '/hecate/v1/events/stream',
  inbox: '/hecate/v1/approvals',
  stats: '/hecate/v1/system/stats',
  traces: '/hecate/v1/traces',
  traceCosts: '/hecate/v1/traces/costs',
  models: '/v1/models',
  providers: '/hecate/v1/providers/status',
  providerPresets: '/hecate/v1/providers/presets',
  localDiscovery: '/hecate/v1/settings/providers/local-discovery',
  capabilityOverrides: '/hecate/v1/model-capabilities/overrides',
  capabilityProbes: '/hecate/v1/model-capabilities/probes',
  adapters: '/hecate/v1/agent-adapters',
  adapterHealth: (a) => `/hecate/v1/agent-adapters/${enc(a)}/health`,
  adapterProbe: (a) => `/hecate/v1/agent-adapters/${enc(a)}/probe`,
  adapterRefresh: (a) => `/hecate/v1/agent-adapters/${enc(a)}/refresh-launcher`,
  adapterInstall: (a) => `/hecate/v1/agent-adapters/${enc(a)}/install`,
  agentProcesses: '/hecate/v1/agent-adapters/processes',
  agentProcessKill: (s) => `/hecate/v1/agent-adapters/processes/${enc(s)}/kill`,
};
