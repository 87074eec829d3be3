// The MCP page (#/mcp): the upstream MCP servers Hecate aggregates, each with
// its state, its OAuth sign-in (issuer, expiry, a "Sign out" button), tools (the
// policy of each, changed in place: a blocked tool leaves every client's list),
// resources and prompts; the client pool's figures; a probe form for a server not
// configured yet; and the audit log of proxied calls.

import { get, post, request, paths, isAbort } from '../api.js';
import { h, alertBox, showError, clearAlert, field, timeEl, focusEl, formatDuration, uid, actionButton } from '../dom.js';

const POLICIES = [['auto', 'Allow'], ['require_approval', 'Require approval'], ['block', 'Block']];

/** The line about a server's stored OAuth sign-in, with "Sign out" when one is
 * kept (its failure shown in `alert`). */
function signInLine(s, alert, onSignOut) {
  const si = s.sign_in;
  if (!si) return null;
  const attrs = { class: 'hint sign-in', dataset: { signIn: si.state } };
  if (si.state === 'missing') {
    return h('p', attrs, 'Not signed in: run ', h('code', { text: `hecate mcp login ${s.name}` }), ' where Hecate runs.');
  }
  const signOut = actionButton({ text: 'Sign out', 'aria-label': `Sign out of ${s.name}` }, alert, () => onSignOut(s.name));
  if (si.state === 'unreadable') {
    return h('p', attrs,
      `The stored sign-in could not be read (${si.error || 'unknown error'}): sign out, then run `,
      h('code', { text: `hecate mcp login ${s.name}` }), '. ', signOut);
  }
  if (si.state === 'rejected') {
    return h('p', attrs,
      `The sign-in with ${si.issuer || 'its issuer'} was refused (revoked, or its refresh failed): run `,
      h('code', { text: `hecate mcp login ${s.name}` }), ' again. ', signOut);
  }
  return h('p', attrs,
    `Signed in with ${si.issuer || 'its authorization server'}`,
    si.expires_at ? h('span', {}, Date.parse(si.expires_at) < Date.now() ? ' · access token expired ' : ' · access token expires ', timeEl(si.expires_at)) : null,
    si.refreshable ? ' · renewed with its refresh token' : ' · no refresh token: sign in again when it expires',
    ' ', signOut);
}

function serverSection(s, alert, onPolicy, onSignOut) {
  const id = uid('srv');
  const heading = h('h3', { id, text: s.name });
  const rows = s.tools.map((t) => {
    const select = h('select', { 'aria-label': `Policy for ${t.name}`, dataset: { tool: t.name } },
      POLICIES.map(([v, label]) => h('option', { value: v, text: label })));
    select.value = t.policy;
    select.addEventListener('change', () => onPolicy(s.name, t.name, select));
    return h('tr', { dataset: { tool: t.name, policy: t.policy } },
      h('td', {}, h('code', { text: t.name })),
      h('td', {}, t.exposed_name ? h('code', { text: t.exposed_name }) : h('span', { class: 'hint', text: 'hidden from clients' })),
      h('td', {}, select),
      h('td', { class: 'hint', text: t.description || '' }));
  });
  const connections = s.connections.map((c) => `${c.in_use} in use${c.idle_ms !== null && c.idle_ms !== undefined ? `, idle ${formatDuration(c.idle_ms)}` : ''}${c.pid ? `, pid ${c.pid}` : ''}`);
  return h('section', { class: 'mcp-server', 'aria-labelledby': id, dataset: { server: s.name, state: s.state } },
    heading,
    h('p', { class: 'session-meta' },
      h('span', { class: `badge status-${{ ok: 'completed', auth_required: 'awaiting_approval' }[s.state] || 'failed'}`, text: s.state }),
      h('span', { text: s.transport }), h('code', { text: s.target }),
      h('span', { text: `server policy: ${s.policy}` }),
      h('span', { text: `${s.resource_count} resource(s)` }), h('span', { text: `${s.prompt_count} prompt(s)` }),
      h('span', { text: connections.length ? `connections: ${connections.join('; ')}` : 'not connected' })),
    signInLine(s, alert, onSignOut),
    s.error ? h('p', { class: 'alert-message', role: 'note', text: s.error }) : null,
    s.error && s.operator_action ? h('p', { class: 'alert-action', text: s.operator_action }) : null,
    s.tools.length ? h('table', { class: 'steps', 'aria-label': `Tools of ${s.name}` },
      h('thead', {}, h('tr', {}, ['Tool', 'Clients call it', 'Policy', 'Description'].map((t) => h('th', { scope: 'col', text: t })))),
      h('tbody', {}, rows)) : null);
}

function probeForm() {
  const alert = alertBox();
  const command = h('input', { type: 'text', placeholder: 'npx -y @modelcontextprotocol/server-everything' });
  const url = h('input', { type: 'url', placeholder: 'https://example.com/mcp' });
  const submit = h('button', { type: 'submit', text: 'Probe' });
  const out = h('ul', { 'aria-label': 'Probed tools', class: 'paths' });
  const note = h('p', { class: 'hint', 'aria-live': 'polite' });
  const form = h('form', { class: 'task-form', 'aria-label': 'Probe a server' },
    field('Command (stdio)', command, 'The program and its arguments, split on spaces.'),
    field('URL (Streamable HTTP)', url), h('div', { class: 'actions' }, submit), alert, note, out);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearAlert(alert);
    out.replaceChildren();
    const entry = url.value.trim() ? { url: url.value.trim() } : (() => {
      const [cmd, ...args] = command.value.trim().split(/\s+/).filter(Boolean);
      return { command: cmd || '', args };
    })();
    submit.disabled = true;
    note.textContent = 'Probing…';
    try {
      const res = (await post(paths.mcpProbe, entry)).data;
      const info = res.server && res.server.name ? `${res.server.name} ${res.server.version || ''}`.trim() : res.name;
      note.textContent = `${info}: ${res.tools.length} tool(s)`;
      out.replaceChildren(...res.tools.map((t) => h('li', {}, h('code', { text: t.name }), t.description ? ` — ${t.description}` : '')));
    } catch (err) {
      note.textContent = '';
      if (!isAbort(err)) showError(alert, err);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

export function mountMcp(root) {
  const ctrl = new AbortController();
  const heading = h('h1', { text: 'MCP' });
  const alert = alertBox();
  const pool = h('dl', { class: 'task-about', 'aria-label': 'Client pool' });
  const servers = h('div', { class: 'mcp-servers' });
  const note = h('p', { class: 'hint', 'aria-live': 'polite' });
  const callsBody = h('tbody');
  const calls = h('table', { class: 'steps', 'aria-label': 'MCP calls' },
    h('thead', {}, h('tr', {}, ['When', 'Client', 'Tool', 'Policy', 'Decision', 'Outcome', 'Took'].map((t) => h('th', { scope: 'col', text: t })))),
    callsBody);
  const refresh = h('button', { type: 'button', text: 'Refresh' });
  root.replaceChildren(heading, h('div', { class: 'toolbar' }, refresh), alert,
    h('h2', { text: 'Client pool' }), pool,
    h('h2', { text: 'Upstream servers' }), note, servers,
    h('h2', { text: 'Probe a server' }), probeForm(),
    h('h2', { text: 'Calls' }), calls);

  async function setPolicy(server, tool, select) {
    clearAlert(alert);
    select.disabled = true;
    try {
      await request('PUT', paths.mcpToolPolicy(server, tool), { body: { policy: select.value }, signal: ctrl.signal });
      await load();
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
      select.disabled = false;
    }
  }

  async function signOut(server) {
    await request('DELETE', paths.mcpSignIn(server), { signal: ctrl.signal });
    await load();
  }

  async function load() {
    try {
      const [list, cache, log] = await Promise.all([
        get(paths.mcpServers, { signal: ctrl.signal }),
        get(paths.mcpCache, { signal: ctrl.signal }),
        get(paths.mcpCalls, { query: { limit: 100 }, signal: ctrl.signal }),
      ]);
      const c = cache.data;
      pool.replaceChildren(
        h('dt', { text: 'Connections' }), h('dd', { text: String(c.entries) }),
        h('dt', { text: 'Leases in use' }), h('dd', { text: String(c.in_use) }),
        h('dt', { text: 'Idle' }), h('dd', { text: String(c.idle) }),
        h('dt', { text: 'Checked' }), h('dd', {}, timeEl(c.checked_at)));
      servers.replaceChildren(...list.data.map((s) => serverSection(s, alert, setPolicy, signOut)));
      note.textContent = list.data.length ? '' : 'No upstream server is configured ([mcp_servers.NAME] in the config file).';
      callsBody.replaceChildren(...log.data.map((r) => h('tr', { dataset: { outcome: r.outcome } },
        h('td', {}, timeEl(r.started_at)), h('td', { text: r.client }),
        h('td', {}, h('code', { text: r.exposed_name })), h('td', { text: r.policy }),
        h('td', { text: r.decision }),
        h('td', { text: r.outcome + (r.error_message ? `: ${r.error_message}` : '') }),
        h('td', { text: formatDuration(r.duration_ms) }))));
      if (!log.data.length) callsBody.append(h('tr', {}, h('td', { colspan: 7, class: 'hint', text: 'No call yet.' })));
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    }
  }

  refresh.addEventListener('click', () => { clearAlert(alert); load(); });
  load();
  focusEl(heading);
  return { unmount: () => ctrl.abort() };
}
