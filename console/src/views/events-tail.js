// A live tail of the process-wide events feed (GET /hecate/v1/events/stream
// ?tail=N): the newest events first, then each one as it is stored, newest on
// top, at most MAX_ROWS kept. Reconnects with Last-Event-ID.

import { authorizedFetch, paths } from '../api.js';
import { readEvents, backoff } from '../stream.js';
import { h, timeEl } from '../dom.js';

const TAIL = 20;
const MAX_ROWS = 200;

/** The "Live events" region and its stop function. */
export function eventsTail() {
  const list = h('ol', { role: 'log', 'aria-label': 'Live events', class: 'activity-list events-tail', reversed: true });
  const state = h('p', { class: 'hint', 'aria-live': 'polite' });
  let lastId = null;
  let closed = false;
  let controller = null;
  let failures = 0;
  let timer = null;

  function show(ev) {
    if (ev.id) lastId = ev.id;
    let e;
    try {
      e = JSON.parse(ev.data);
    } catch {
      return;
    }
    const summary = e.data && (e.data.status || e.data.kind || e.data.tool || e.data.path || e.data.decision);
    list.prepend(h('li', { class: 'activity', dataset: { type: e.type, sequence: String(e.sequence) } },
      h('span', { class: 'activity-type', text: e.type }),
      h('a', { href: `#/tasks/${encodeURIComponent(e.task_id)}?run=${encodeURIComponent(e.run_id)}`, text: e.task_id }),
      summary ? h('span', { class: 'badge', text: String(summary) }) : null,
      ' ', timeEl(e.occurred_at)));
    while (list.children.length > MAX_ROWS) list.lastElementChild.remove();
  }

  async function connect() {
    if (closed) return;
    controller = new AbortController();
    const headers = { Accept: 'text/event-stream' };
    if (lastId) headers['Last-Event-ID'] = lastId;
    try {
      const res = await authorizedFetch(`${paths.eventsStream}?tail=${TAIL}`, { headers, signal: controller.signal, cache: 'no-store' });
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      failures = 0;
      state.textContent = 'Following.';
      await readEvents(res, show);
    } catch {
      /* reconnect below */
    }
    if (closed) return;
    failures += 1;
    state.textContent = 'Reconnecting…';
    timer = setTimeout(connect, backoff(failures));
  }

  connect();
  return {
    element: h('section', { 'aria-label': 'Events feed' }, h('h2', { text: 'Live events' }), state, list),
    stop() {
      closed = true;
      if (timer) clearTimeout(timer);
      if (controller) controller.abort();
    },
  };
}
