// The chat view (#/chats/<id>): loads the session page and its pending approvals,
// subscribes to the session stream, renders the transcript, drives the composer,
// the "Queued next" drain on `done`, Stop, and inline approvals.

import { get, post, paths, isAbort } from '../api.js';
import { h, alertBox, showError, showMessage, clearAlert, focusEl } from '../dom.js';
import { openSessionStream } from '../stream.js';
import { sessionQueue } from '../queue.js';
import { refreshStats } from '../stats.js';
import { loadModels, loadAdapters } from '../targets.js';
import { createTranscript, segmentLabel } from './transcript.js';
import { createComposer } from './composer.js';
import { approvalGroup } from './approvals.js';

const BUSY_RUN = new Set(['queued', 'running', 'awaiting_approval']);

export function mountChat(root, sessionId) {
  const ctrl = new AbortController();
  const queue = sessionQueue(sessionId);
  const heading = h('h1', { class: 'chat-title', text: 'Chat' });
  const sub = h('p', { class: 'chat-sub hint' });
  const alert = alertBox();
  const loadOlder = h('button', { type: 'button', text: 'Load older', hidden: true });
  const connection = h('p', { class: 'hint connection', hidden: true });
  const transcript = createTranscript(sessionId);
  const approvals = new Map(); // approval_id -> element

  let session = null; // latest header + state
  let inflight = 0;
  let gone = false;
  let draining = false;
  let holdQueue = false; // a queued prompt was refused: wait for the next done
  let streamReady = null;
  let resolveReady = null;
  streamReady = new Promise((r) => { resolveReady = r; });

  const composer = createComposer({ onSubmit: submit, onStop: stop, queue });
  root.replaceChildren(heading, sub, alert, connection, h('div', { class: 'older' }, loadOlder), transcript.el, composer.el);

  function setHeader(s) {
    if (!s) return;
    if (heading.textContent !== (s.title || s.id)) {
      heading.textContent = s.title || s.id;
      document.title = `${s.title || s.id} · Hecate`;
    }
    const bits = [segmentLabel(s)];
    if (s.workspace) bits.push(`workspace ${s.workspace}`);
    bits.push(`status ${s.status}`);
    sub.textContent = bits.join(' · ');
  }

  /** Whether the server says a turn is going on. */
  function serverBusy() {
    if (!session) return false;
    if (session.status === 'running' || session.status === 'awaiting_approval') return true;
    const runs = session.runs || [];
    const latest = runs.find((r) => r.id === session.latest_run_id) || runs[runs.length - 1];
    if (latest && BUSY_RUN.has(latest.status)) return true;
    const last = transcript.last();
    return Boolean(last && last.status === 'running');
  }

  const busy = () => inflight > 0 || serverBusy();

  /** The task backing the running agent turn: the live answer names it once its
   * task run exists (before that, an earlier answer of the same segment does). */
  function currentTaskId() {
    const msgs = transcript.messages();
    const live = msgs[msgs.length - 1];
    if (live && live.task_id) return live.task_id;
    for (let i = msgs.length - 2; i >= 0; i -= 1) {
      if (msgs[i].task_id && (!live || msgs[i].segment_id === live.segment_id)) return msgs[i].task_id;
    }
    return null;
  }

  function updateBusy() {
    const isBusy = busy();
    let label = '';
    let taskId = null;
    if (isBusy) {
      const last = transcript.last();
      const runtime = (last && last.runtime_kind) || (session && session.runtime_kind);
      const awaiting = (session && session.status === 'awaiting_approval') || approvals.size > 0;
      label = awaiting ? 'Waiting for an approval.' : 'A turn is running.';
      const runs = (session && session.runs) || [];
      const latest = runs.find((r) => r.id === session.latest_run_id);
      if (latest && latest.status === 'queued') label = 'The turn is queued.';
      if (runtime === 'agent') taskId = currentTaskId();
    }
    composer.setBusy({ busy: isBusy, label, taskId });
    transcript.el.setAttribute('aria-busy', isBusy ? 'true' : 'false');
  }

  let applied = 0; // how many session states have been applied (stream, POST, GET)

  function applySession(s, { authoritativeTail = true } = {}) {
    if (!s) return;
    applied += 1;
    const { messages, ...header } = s;
    session = { ...(session || {}), ...header };
    setHeader(session);
    transcript.merge(messages || [], { authoritativeTail });
    // Sequences start at 0 without gaps: holding 0 means nothing is older.
    if (transcript.firstSequence() === 0) loadOlder.hidden = true;
    updateBusy();
  }

  function sessionGone() {
    gone = true;
    queue.clear();
    composer.renderQueue();
    showMessage(alert, 'This chat no longer exists.', 'It was deleted; its queued prompts were dropped.');
    composer.setBusy({ busy: false });
  }

  function addApproval(data) {
    if (!data || !data.approval_id || approvals.has(data.approval_id)) return;
    const item = { kind: 'session', session_id: sessionId, ...data };
    const el = approvalGroup(item, { onDone: () => removeApproval(data.approval_id) });
    approvals.set(data.approval_id, el);
    transcript.approvalsEl.append(el);
    updateBusy();
  }

  function removeApproval(id) {
    const el = approvals.get(id);
    if (!el) return;
    const hadFocus = el.contains(document.activeElement);
    el.remove();
    approvals.delete(id);
    updateBusy();
    if (hadFocus) composer.focus();
  }

  async function prunePendingApprovals() {
    try {
      const ap = await get(paths.approvals(sessionId), { query: { status: 'pending' }, signal: ctrl.signal });
      const still = new Set(((ap && ap.data) || []).map((a) => a.id));
      for (const id of [...approvals.keys()]) if (!still.has(id)) removeApproval(id);
    } catch {
      /* the next reconnect tries again */
    }
  }

  async function postTurn(content, target) {
    clearAlert(alert);
    inflight += 1;
    updateBusy();
    const body = { content };
    if (target && target.runtime_kind) body.runtime_kind = target.runtime_kind;
    if (target && target.model) body.model = target.model;
    if (target && target.adapter_id) body.adapter_id = target.adapter_id;
    let ok = false;
    try {
      // Subscribe before posting so the turn is seen from its start.
      await Promise.race([streamReady, new Promise((r) => setTimeout(r, 3000))]);
      const res = await post(paths.messages(sessionId), body);
      ok = true;
      if (res && res.data && !ctrl.signal.aborted) {
        // The turn has ended: its live answer gives way to the stored one even if
        // the stream missed the done.
        for (const run of res.data.runs || []) if (!BUSY_RUN.has(run.status)) transcript.drop(`pending_${run.id}`);
        applySession(res.data, { authoritativeTail: false });
      }
    } catch (err) {
      if (ctrl.signal.aborted) return false;
      if (err.status === 404) sessionGone();
      else showError(alert, err);
      return err.status === 409 ? 'busy' : false;
    } finally {
      inflight -= 1;
      if (!ctrl.signal.aborted) {
        updateBusy();
        if (!holdQueue) setTimeout(maybeDrain, 0);
      }
    }
    return ok;
  }

  async function submit(content, target) {
    if (gone) {
      showMessage(alert, 'This chat no longer exists.');
      return false;
    }
    if (busy()) {
      queue.add(content, target);
      composer.renderQueue();
      return true;
    }
    // The text leaves the box at once; a refusal puts it back in the alert's place.
    holdQueue = false;
    const p = postTurn(content, target);
    p.then((ok) => {
      if (ok === 'busy') {
        // Busy elsewhere (another client or process): keep it for after that turn.
        queue.add(content, target);
        holdQueue = true;
        composer.renderQueue();
      } else if (ok === false && !composer.text.value) {
        composer.text.value = content;
      }
    });
    return true;
  }

  async function maybeDrain() {
    if (draining || holdQueue || gone || busy() || ctrl.signal.aborted) return;
    const next = queue.shift();
    if (!next) return;
    composer.renderQueue();
    draining = true;
    try {
      holdQueue = false;
      const ok = await postTurn(next.content, next.target);
      if (ok !== true) {
        // Refused: keep it first in line (editable) until the next turn ends.
        holdQueue = true;
        if (!gone) queue.unshift(next);
        composer.renderQueue();
      }
    } finally {
      draining = false;
    }
  }

  async function stop() {
    clearAlert(alert);
    try {
      await post(paths.cancel(sessionId), {});
    } catch (err) {
      if (err.type === 'agent_chat.session_not_running') showMessage(alert, 'No turn is running.');
      else if (!isAbort(err)) showError(alert, err);
    }
  }

  loadOlder.addEventListener('click', async () => {
    const first = transcript.firstSequence();
    if (first === null) return;
    loadOlder.disabled = true;
    try {
      const res = await get(paths.session(sessionId), { query: { before_sequence: first }, signal: ctrl.signal });
      const d = res.data;
      transcript.merge(d.messages || []);
      loadOlder.hidden = !(d.page && d.page.older);
      const firstArticle = transcript.el.querySelector('article');
      if (firstArticle) focusEl(firstArticle);
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    } finally {
      loadOlder.disabled = false;
    }
  });

  composer.renderQueue();
  focusEl(heading);

  // The stream first (it also re-sends pending approvals), then the page.
  const stream = openSessionStream(sessionId, {
    onSnapshot: (s) => applySession(s),
    onDone: (s) => {
      holdQueue = false;
      applySession(s);
      refreshStats();
      setTimeout(maybeDrain, 0);
    },
    onApprovalRequested: (d) => {
      addApproval(d);
      refreshStats();
    },
    onApprovalResolved: (d) => {
      removeApproval(d.approval_id);
      refreshStats();
    },
    onGone: () => sessionGone(),
    onState: (state) => {
      if (state === 'open') {
        // Back after a drop: approvals decided meanwhile are not replayed.
        if (!connection.hidden) prunePendingApprovals();
        connection.hidden = true;
        resolveReady();
      } else {
        connection.textContent = 'Connection lost; reconnecting…';
        connection.hidden = false;
      }
    },
  });

  (async () => {
    try {
      const before = applied;
      const res = await get(paths.session(sessionId), { signal: ctrl.signal });
      loadOlder.hidden = !(res.data.page && res.data.page.older);
      // A state the stream or a turn's answer applied while this read was out may
      // be newer than it (a turn that ended meanwhile): the read then gives way.
      if (applied === before) applySession(res.data, { authoritativeTail: true });
      const ap = await get(paths.approvals(sessionId), { query: { status: 'pending' }, signal: ctrl.signal });
      for (const a of (ap && ap.data) || []) {
        addApproval({ approval_id: a.id, run_id: a.run_id, tool_name: a.tool_name, tool_kind: a.tool_kind, options: a.options, scope_choices: a.scope_choices || scopeChoices(session), created_at: a.created_at, expires_at: a.expires_at });
      }
      // A queue left from before: the turn it waited for ended while we were away.
      if (!busy()) setTimeout(maybeDrain, 0);
    } catch (err) {
      if (isAbort(err)) return;
      if (err.status === 404) sessionGone();
      else showError(alert, err);
    }
    if (!ctrl.signal.aborted) {
      loadModels(ctrl.signal).catch(() => []).then((models) =>
        loadAdapters(ctrl.signal).catch(() => []).then((adapters) => {
          if (!ctrl.signal.aborted) composer.setTargets(models || [], adapters || [], session);
        }));
    }
  })();

  return {
    unmount() {
      ctrl.abort();
      stream.close();
    },
  };
}

/** The scopes a decision can take on this session (as the stream reports them). */
function scopeChoices(s) {
  const out = ['once', 'session'];
  if (s && s.workspace) out.push('workspace_tool');
  if (s && s.adapter_id) out.push('adapter_tool');
  return out;
}
