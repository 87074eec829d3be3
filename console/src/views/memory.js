// The Memory page (#/memory): recall's status and a search by meaning across
// sessions (each hit linking to its chat), and the client-hosted flow agents
// that loaded — with their chats — and the flow files that did not, with the
// field at fault.

import { get, paths, isAbort } from '../api.js';
import { h, alertBox, showError, clearAlert, field, timeEl, focusEl, uid } from '../dom.js';

function statusLine(s) {
  const parts = [`Recall is ${s.state}`];
  if (s.embeddings) parts.push(`embeddings ${s.embeddings}`);
  parts.push(`${s.indexed} indexed, ${s.pending} pending, ${s.dropped} dropped`);
  return parts.join(' · ');
}

function searchForm(status) {
  const alert = alertBox();
  const query = h('input', { type: 'search', required: true, maxlength: 8000 });
  const user = h('input', { type: 'text', autocomplete: 'off' });
  const session = h('input', { type: 'text', autocomplete: 'off' });
  const k = h('input', { type: 'number', min: 1, max: 100, value: '5' });
  const results = h('ol', { 'aria-label': 'Recalled messages', class: 'activity-list' });
  const note = h('p', { class: 'hint', 'aria-live': 'polite' });
  const form = h('form', { role: 'search', 'aria-label': 'Search memory', class: 'task-form' },
    field('Search memory', query), field('User', user, 'Empty: the namespace\'s shared memory.'),
    field('Only session', session), field('Results', k),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', text: 'Search' })), alert);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearAlert(alert);
    note.textContent = 'Searching…';
    try {
      const res = (await get(paths.memorySearch, { query: { query: query.value, user: user.value.trim(), session: session.value.trim(), k: k.value } })).data;
      status(res.status);
      results.replaceChildren(...res.results.map((r) => h('li', { class: 'activity', dataset: { sessionId: r.session_id } },
        h('span', { class: 'activity-type', text: r.role }),
        h('a', { href: `#/chats/${encodeURIComponent(r.session_id)}`, text: `${r.session_id} #${r.sequence}` }),
        h('span', { class: 'badge', text: `score ${r.score.toFixed(3)}` }), ' ', timeEl(r.created_at),
        h('p', { class: 'activity-detail', text: r.text }))));
      note.textContent = res.results.length ? `${res.results.length} message(s)` : (res.status.state === 'ready' ? 'Nothing close enough.' : 'Recall is degraded: nothing was searched.');
    } catch (err) {
      note.textContent = '';
      if (!isAbort(err)) showError(alert, err);
    }
  });
  return h('div', {}, form, note, results);
}

function agentSection(agent, signal) {
  const id = uid('agent');
  const chats = h('tbody');
  const table = h('table', { class: 'steps', 'aria-label': `Chats with ${agent.name}`, hidden: true },
    h('thead', {}, h('tr', {}, ['Chat', 'Caller', 'Conversation / stage', 'State', 'Updated'].map((t) => h('th', { scope: 'col', text: t })))),
    chats);
  const show = h('button', { type: 'button', text: `Show chats with ${agent.name}`, 'aria-expanded': 'false' });
  const alert = alertBox();
  show.addEventListener('click', async () => {
    if (!table.hidden) {
      table.hidden = true;
      show.setAttribute('aria-expanded', 'false');
      return;
    }
    clearAlert(alert);
    try {
      const list = (await get(paths.flowChats(agent.id), { query: { limit: 100 }, signal })).data;
      chats.replaceChildren(...list.map((c) => h('tr', { dataset: { chatId: c.id } },
        h('td', {}, h('code', { text: c.id })),
        h('td', { text: c.app_id ? `app ${c.app_id} · ${c.user_id}` : c.user_id }),
        h('td', { text: `${c.conversation} / ${c.stage}` }),
        h('td', { text: c.ended ? 'ended' : c.on_track ? 'on track' : 'off track' }),
        h('td', {}, timeEl(c.updated_at)))));
      if (!list.length) chats.append(h('tr', {}, h('td', { colspan: 5, class: 'hint', text: 'No chat yet.' })));
      table.hidden = false;
      show.setAttribute('aria-expanded', 'true');
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    }
  });
  return h('section', { class: 'mcp-server', 'aria-labelledby': id, dataset: { agentId: agent.id } },
    h('h3', { id, text: agent.name }),
    h('p', { class: 'session-meta' }, h('code', { text: agent.id }), h('span', { text: `starts in ${agent.welcome}` }),
      h('span', { text: agent.conversations.map((c) => `${c.name} (${c.stage_count} stage${c.stage_count === 1 ? '' : 's'})`).join(', ') })),
    show, alert, table);
}

export function mountMemory(root) {
  const ctrl = new AbortController();
  const heading = h('h1', { text: 'Memory and flows' });
  const alert = alertBox();
  const status = h('p', { class: 'run-status', role: 'status' });
  const action = h('p', { class: 'alert-action' });
  const agents = h('div', {});
  const errors = h('ul', { 'aria-label': 'Flow files that did not load', class: 'paths' });
  const showStatus = (s) => {
    status.textContent = statusLine(s);
    status.dataset.state = s.state;
    action.textContent = s.message || '';
    action.hidden = !s.message;
  };
  root.replaceChildren(heading, alert,
    h('h2', { text: 'Recall' }), status, action, searchForm(showStatus),
    h('h2', { text: 'Flow agents' }), agents,
    h('h2', { text: 'Flow files that did not load' }), errors);

  async function load() {
    try {
      const [st, catalog] = await Promise.all([
        get(paths.memoryStatus, { signal: ctrl.signal }),
        get(paths.flows, { signal: ctrl.signal }),
      ]);
      showStatus(st.data);
      agents.replaceChildren(...catalog.data.agents.map((a) => agentSection(a, ctrl.signal)));
      if (!catalog.data.agents.length) agents.append(h('p', { class: 'hint', text: 'No flow agent: add flows/<agent>.toml to the config directory.' }));
      errors.replaceChildren(...catalog.data.errors.map((e) => h('li', { dataset: { agentId: e.agent_id } },
        h('strong', { text: e.agent_id }), ': ', h('code', { text: e.file }), ` — ${e.field}: ${e.message}`)));
      if (!catalog.data.errors.length) errors.append(h('li', { class: 'hint', text: 'None.' }));
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    }
  }

  load();
  focusEl(heading);
  return { unmount: () => ctrl.abort() };
}
