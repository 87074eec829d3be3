// The chats list (#/chats): every Agent Chat session with its title, target,
// status, last activity and known cost; a search box and Status/Target filters.

import { get, paths, isAbort } from '../api.js';
import { h, alertBox, showError, field, timeEl, formatCost, focusEl } from '../dom.js';
import { pruneQueues } from '../queue.js';

const LIMIT = 1000;

function targetOf(s) {
  if (s.runtime_kind === 'external_agent') return `External agent: ${s.adapter_id || '?'}`;
  const m = [s.provider, s.model].filter(Boolean).join('/');
  return `${s.runtime_kind === 'agent' ? 'Hecate agent' : 'Model'}${m ? `: ${m}` : ''}`;
}

export function mountChats(root) {
  const ctrl = new AbortController();
  const heading = h('h1', { text: 'Chats' });
  const alert = alertBox();
  const search = h('input', { type: 'search', placeholder: 'Title, model, agent…' });
  const status = h('select', {}, h('option', { value: '', text: 'Any status' }));
  const target = h('select', {},
    h('option', { value: '', text: 'Any target' }),
    h('option', { value: 'model', text: 'Model' }),
    h('option', { value: 'agent', text: 'Hecate agent' }),
    h('option', { value: 'external_agent', text: 'External agent' }));
  const list = h('ul', { 'aria-label': 'Sessions', class: 'session-list' });
  const note = h('p', { class: 'hint', 'aria-live': 'polite' });
  const searchField = field('Search chats', search);
  search.setAttribute('aria-controls', 'sessions-list');
  list.id = 'sessions-list';
  root.replaceChildren(heading,
    h('div', { class: 'filters', role: 'search', 'aria-label': 'Filter chats' }, searchField, field('Status', status), field('Target', target)),
    alert, note, list);

  let sessions = [];

  function render() {
    const q = search.value.trim().toLowerCase();
    const st = status.value;
    const tg = target.value;
    list.replaceChildren();
    let shown = 0;
    for (const s of sessions) {
      if (st && s.status !== st) continue;
      if (tg && (s.runtime_kind || 'model') !== tg) continue;
      const hay = `${s.title || ''} ${s.id} ${targetOf(s)} ${s.workspace || ''}`.toLowerCase();
      if (q && !hay.includes(q)) continue;
      shown += 1;
      const cost = formatCost(s.cost_micros_usd ?? s.total_cost_micros_usd, s.cost_usd ?? s.total_cost_usd);
      list.append(h('li', { class: 'session' },
        h('a', { href: `#/chats/${encodeURIComponent(s.id)}`, dataset: { sessionId: s.id }, text: s.title || s.id }),
        h('div', { class: 'session-meta' },
          h('span', { class: 'target', text: targetOf(s) }),
          h('span', { class: `badge status-${s.status}`, text: s.status }),
          h('span', {}, 'last activity ', timeEl(s.last_activity_at || s.updated_at)),
          h('span', { text: `${s.message_count ?? 0} messages` }),
          cost ? h('span', { text: cost }) : null)));
    }
    note.textContent = sessions.length === 0 ? 'No chats yet.' : shown === 0 ? 'No chat matches the filters.' : `${shown} of ${sessions.length} chats`;
  }

  async function load() {
    try {
      const res = await get(paths.sessions, { query: { limit: LIMIT }, signal: ctrl.signal });
      sessions = (res && res.data) || [];
      const statuses = [...new Set(sessions.map((s) => s.status).filter(Boolean))].sort();
      const keep = status.value;
      status.replaceChildren(h('option', { value: '', text: 'Any status' }), statuses.map((s) => h('option', { value: s, text: s })));
      status.value = statuses.includes(keep) ? keep : '';
      if (sessions.length < LIMIT) pruneQueues(new Set(sessions.map((s) => s.id)));
      render();
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    }
  }

  search.addEventListener('input', render);
  status.addEventListener('change', render);
  target.addEventListener('change', render);
  load();
  focusEl(heading);
  return { unmount: () => ctrl.abort() };
}
