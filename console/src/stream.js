// The session stream: GET …/sessions/{id}/stream read with fetch + ReadableStream
// and the vendored SSE parser (EventSource cannot send Authorization). Keeps the
// last event id, reconnects with Last-Event-ID and backoff, and re-subscribes after
// `done` so the next turn is seen. No polling: an idle stream just stays open.

import { createParser } from '../vendor/eventsource-parser/parse.js';
import { authorizedFetch, paths } from './api.js';

const MAX_BACKOFF_MS = 15000;

/** Feeds the SSE events of a response body to `onEvent` until the body ends
 * (throws when reading fails, an abort included). */
export async function readEvents(res, onEvent) {
  const parser = createParser({ onEvent });
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    parser.feed(decoder.decode(value, { stream: true }));
  }
}

/** The delay before reconnect attempt `failures` (1, 2, …): doubling from
 * 500 ms up to 15 s, with jitter. */
export function backoff(failures) {
  return Math.min(MAX_BACKOFF_MS, 500 * 2 ** Math.min(failures - 1, 5)) + Math.floor(Math.random() * 250);
}

/**
 * Opens a session stream. `handlers`: onSnapshot(session), onDone(session),
 * onApprovalRequested(data), onApprovalResolved(data), onGone() (404),
 * onState('open'|'reconnecting'). Answers an object with close().
 */
export function openSessionStream(sessionId, handlers) {
  let lastEventId = null;
  let closed = false;
  let controller = null;
  let failures = 0;
  let timer = null;
  let doneSeen = false;

  const call = (name, arg) => {
    const fn = handlers[name];
    if (!fn) return;
    try {
      fn(arg);
    } catch (err) {
      // A rendering bug must not kill the stream; surface it once.
      console.warn('console: stream handler failed', err);
    }
  };

  function dispatch(ev) {
    if (ev.id) lastEventId = ev.id;
    let data = null;
    try {
      data = ev.data ? JSON.parse(ev.data) : null;
    } catch {
      return;
    }
    // Snapshots come in the API's {object, data} envelope; unwrap it.
    if (data && typeof data === 'object' && typeof data.object === 'string' && data.data && typeof data.data === 'object') data = data.data;
    switch (ev.event) {
      case 'snapshot':
        call('onSnapshot', data);
        break;
      case 'done':
        doneSeen = true;
        call('onDone', data);
        break;
      case 'approval.requested':
        call('onApprovalRequested', data);
        break;
      case 'approval.resolved':
        call('onApprovalResolved', data);
        break;
      default:
        break;
    }
  }

  async function connect() {
    if (closed) return;
    controller = new AbortController();
    const headers = { Accept: 'text/event-stream' };
    if (lastEventId) headers['Last-Event-ID'] = lastEventId;
    let res;
    try {
      res = await authorizedFetch(paths.stream(sessionId), { headers, signal: controller.signal, cache: 'no-store' });
    } catch (err) {
      if (closed) return;
      return retry();
    }
    if (closed) return;
    if (res.status === 404) {
      call('onGone');
      return;
    }
    if (!res.ok || !res.body) {
      return retry();
    }
    failures = 0;
    call('onState', 'open');
    doneSeen = false;
    try {
      await readEvents(res, dispatch);
    } catch {
      if (closed) return;
      return retry();
    }
    if (closed) return;
    if (doneSeen) {
      // The server ends the stream after a turn's done: subscribe again at once
      // (resuming from the done id gives nothing until the next turn).
      connect();
    } else {
      retry();
    }
  }

  function retry() {
    if (closed) return;
    failures += 1;
    call('onState', 'reconnecting');
    timer = setTimeout(connect, backoff(failures));
  }

  connect();

  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      if (controller) controller.abort();
    },
    get lastEventId() {
      return lastEventId;
    },
  };
}
