// A task run's stream: GET …/runs/{run_id}/stream read with fetch and the
// vendored SSE parser. Every frame carries the run's whole state
// (TaskRunStreamEventData), so the view renders the newest frame and never
// refetches. The server ends the stream after the run's last event; a broken
// connection resumes with Last-Event-ID.

import { authorizedFetch, paths } from './api.js';
import { readEvents, backoff } from './stream.js';

/**
 * Follows a run. `handlers`: onFrame(data) for each frame, onEnd() once the
 * run is over and its last frame was read, onGone() on 404, onState('open' |
 * 'reconnecting'). Answers an object with close().
 */
export function openRunStream(taskId, runId, handlers) {
  let lastEventId = null;
  let closed = false;
  let controller = null;
  let failures = 0;
  let timer = null;

  const call = (name, arg) => {
    const fn = handlers[name];
    if (!fn) return;
    try {
      fn(arg);
    } catch (err) {
      console.warn('console: run stream handler failed', err);
    }
  };

  function dispatch(ev) {
    if (ev.id) lastEventId = ev.id;
    try {
      const data = JSON.parse(ev.data);
      if (data && data.run) call('onFrame', data);
    } catch {
      /* a frame that is not JSON is skipped */
    }
  }

  function retry() {
    if (closed) return;
    failures += 1;
    call('onState', 'reconnecting');
    timer = setTimeout(connect, backoff(failures));
  }

  async function connect() {
    if (closed) return;
    controller = new AbortController();
    const headers = { Accept: 'text/event-stream' };
    if (lastEventId) headers['Last-Event-ID'] = lastEventId;
    let res;
    try {
      res = await authorizedFetch(paths.runStream(taskId, runId), { headers, signal: controller.signal, cache: 'no-store' });
    } catch {
      return retry();
    }
    if (closed) return;
    if (res.status === 404) return call('onGone');
    if (!res.ok || !res.body) return retry();
    failures = 0;
    call('onState', 'open');
    try {
      await readEvents(res, dispatch);
    } catch {
      return retry();
    }
    if (closed) return;
    // The server ends a run's stream only once the run is over.
    closed = true;
    call('onEnd');
  }

  connect();
  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      if (controller) controller.abort();
    },
  };
}
