// The transcript: one <article> per message inside the role=log "Transcript",
// keyed by message id and updated in place (a snapshot only touches the messages
// whose JSON changed), with segment boundaries where the runtime target changes.

import { h, formatCost, formatDuration, timeEl } from '../dom.js';
import { renderMarkdown } from '../markdown.js';
import { filesSection } from './files.js';

const ROLE_LABEL = { user: 'You', assistant: 'Assistant', system: 'System', tool: 'Tool' };

function segmentKey(m) {
  return [m.runtime_kind || '', m.provider || '', m.model || '', m.adapter_id || ''].join('|');
}

export function segmentLabel(m) {
  const rt = m.runtime_kind === 'agent' ? 'Hecate agent' : m.runtime_kind === 'external_agent' ? 'External agent' : 'Model';
  const target = m.runtime_kind === 'external_agent' ? m.adapter_id || '' : [m.provider, m.model].filter(Boolean).join('/');
  return target ? `${rt}: ${target}` : rt;
}

function seqOf(m) {
  return typeof m.sequence === 'number' ? m.sequence : Number.MAX_SAFE_INTEGER;
}

function cheapSig(m) {
  const acts = m.activities || [];
  const last = acts[acts.length - 1];
  return `${m.status}|${m.sequence}|${(m.content || '').length}|${acts.length}|${last ? last.type + last.status : ''}|${m.error || ''}|${m.usage ? m.usage.total_tokens : ''}`;
}

function hasFiles(m) {
  return m.role === 'assistant' && !String(m.id).startsWith('pending_') &&
    (m.activities || []).some((a) => a.type === 'files_changed' || a.type === 'files_reverted');
}

function metaStrip(m) {
  const u = m.usage || {};
  const parts = [];
  if (m.runtime_kind === 'external_agent' && m.adapter_id) parts.push(['agent', m.adapter_name || m.adapter_id]);
  if (m.provider) parts.push(['provider', m.provider]);
  if (m.model) parts.push(['model', m.model]);
  if (typeof u.prompt_tokens === 'number') parts.push(['tokens', `${u.prompt_tokens} in / ${u.completion_tokens ?? 0} out`]);
  const cost = formatCost(u.cost_micros_usd, u.cost_usd);
  if (cost) parts.push(['cost', cost]);
  const dur = formatDuration(m.duration_ms ?? (m.timing && m.timing.total_ms));
  if (dur) parts.push(['duration', dur]);
  const dl = h('dl', { class: 'meta' });
  for (const [k, v] of parts) dl.append(h('div', {}, h('dt', { text: k }), h('dd', { text: v })));
  return dl;
}

function activityList(acts) {
  const ol = h('ol', { class: 'activity' });
  for (const a of acts) {
    ol.append(h('li', { class: `act act-${a.type}`, dataset: { status: a.status || '' } },
      h('span', { class: `badge status-${a.status || 'unknown'}`, text: a.status || '' }), ' ',
      h('span', { class: 'act-title', text: a.title || a.type }),
      a.detail ? h('span', { class: 'act-detail', text: ` — ${a.detail}` }) : null,
      a.created_at ? h('span', { class: 'act-time' }, ' ', timeEl(a.created_at)) : null));
  }
  return ol;
}

/** Creates a transcript controller over a fresh log element. */
export function createTranscript(sessionId, { onChange } = {}) {
  const log = h('div', { role: 'log', 'aria-label': 'Transcript', 'aria-live': 'polite', class: 'transcript' });
  const tail = h('div', { class: 'inline-approvals' });
  const empty = h('p', { class: 'empty', text: 'No messages yet. Send the first one below.' });
  log.append(empty, tail);
  /** id -> {msg, json, el, boundary, files, open} */
  const records = new Map();
  let order = []; // ids sorted by sequence

  function renderArticle(rec) {
    const m = rec.msg;
    const el = rec.el;
    const openDetails = new Set([...el.querySelectorAll(':scope > details[open]')].map((d) => d.dataset.part));
    el.dataset.role = m.role || 'assistant';
    el.dataset.status = m.status || '';
    el.dataset.messageId = m.id;
    const header = h('header', { class: 'msg-head' },
      h('span', { class: 'msg-role', text: ROLE_LABEL[m.role] || m.role }),
      m.is_summary ? h('span', { class: 'badge', text: 'summary' }) : null,
      m.status && m.status !== 'completed' ? h('span', { class: `badge status-${m.status}`, text: m.status }) : null,
      m.created_at ? timeEl(m.created_at) : null);
    const children = [header];
    const body = h('div', { class: 'msg-body' });
    if (m.role === 'assistant') body.append(renderMarkdown(m.content || ''));
    else if (m.role === 'tool') body.append(h('pre', {}, h('code', { text: m.content || '' })));
    else body.append(h('p', { class: 'plain', text: m.content || '' }));
    if (m.role === 'assistant' && m.status === 'running' && !m.content) body.append(h('p', { class: 'working', text: 'Working…' }));
    children.push(body);
    if (m.error || m.error_message) {
      children.push(h('p', { class: 'msg-error' }, h('strong', { text: m.error || 'error' }), m.error_message ? `: ${m.error_message}` : ''));
    }
    if (m.role === 'assistant') {
      children.push(metaStrip(m));
      if (m.task_id) {
        children.push(h('p', { class: 'task-link' }, h('a', { href: `#/tasks/${encodeURIComponent(m.task_id)}`, text: `Backing task ${m.task_id}` })));
      }
      const acts = m.activities || [];
      const act = h('details', { class: 'activity-details', 'aria-label': 'Activity', dataset: { part: 'activity' } }, h('summary', { text: 'Activity' }),
        acts.length ? activityList(acts) : h('p', { class: 'hint', text: 'No activity recorded.' }));
      children.push(act);
      if (hasFiles(m)) {
        if (!rec.files) rec.files = filesSection(sessionId, m.id, { wasReverted: () => (rec.msg.activities || []).some((a) => a.type === 'files_reverted') });
        else if (rec.filesSig !== fileSig(m)) rec.files.refresh();
        rec.filesSig = fileSig(m);
        children.push(rec.files.el);
      }
    }
    // The raw JSON is written when the disclosure opens (a long transcript
    // would otherwise hold every message twice).
    const rawCode = h('code');
    const raw = h('details', { class: 'raw-details', 'aria-label': 'Details', dataset: { part: 'details' } }, h('summary', { text: 'Details' }),
      h('pre', { class: 'raw-json' }, rawCode));
    raw.addEventListener('toggle', () => {
      if (raw.open) rawCode.textContent = JSON.stringify(rec.msg, null, 2);
    });
    children.push(raw);
    const focused = el.contains(document.activeElement) ? document.activeElement : null;
    el.replaceChildren(...children);
    for (const d of el.querySelectorAll(':scope > details')) if (openDetails.has(d.dataset.part)) d.open = true;
    // A control kept across the rebuild (the files section) keeps the focus.
    if (focused && focused !== document.activeElement && el.contains(focused)) focused.focus({ preventScroll: true });
  }

  function fileSig(m) {
    return (m.activities || []).filter((a) => a.type === 'files_changed' || a.type === 'files_reverted').length;
  }

  function nodeAfter(index) {
    for (let i = index; i < order.length; i += 1) {
      const r = records.get(order[i]);
      if (r) return r.boundary || r.el;
    }
    return tail;
  }

  function insert(msg) {
    const rec = { msg, json: JSON.stringify(msg), sig: cheapSig(msg), el: h('article', { class: 'message' }), boundary: null, files: null };
    records.set(msg.id, rec);
    const s = seqOf(msg);
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (seqOf(records.get(order[mid]).msg) <= s) lo = mid + 1;
      else hi = mid;
    }
    order.splice(lo, 0, msg.id);
    renderArticle(rec);
    log.insertBefore(rec.el, nodeAfter(lo + 1));
  }

  function remove(id) {
    const rec = records.get(id);
    if (!rec) return;
    rec.el.remove();
    if (rec.boundary) rec.boundary.remove();
    records.delete(id);
    order = order.filter((x) => x !== id);
  }

  function updateBoundaries() {
    let prev = null;
    for (const id of order) {
      const rec = records.get(id);
      const key = segmentKey(rec.msg);
      const want = prev !== null && key !== prev;
      if (want && !rec.boundary) {
        rec.boundary = h('div', { class: 'segment-boundary', role: 'separator', 'aria-label': `Now: ${segmentLabel(rec.msg)}` },
          h('span', { text: segmentLabel(rec.msg) }));
        log.insertBefore(rec.boundary, rec.el);
      } else if (!want && rec.boundary) {
        rec.boundary.remove();
        rec.boundary = null;
      } else if (want && rec.boundary) {
        rec.boundary.firstChild.textContent = segmentLabel(rec.msg);
        rec.boundary.setAttribute('aria-label', `Now: ${segmentLabel(rec.msg)}`);
      }
      prev = key;
    }
  }

  /**
   * Merges messages (any page, any order). With `authoritativeTail`, live
   * answers (pending_…) absent from `messages` are dropped: the stored one took over.
   */
  function merge(messages, { authoritativeTail = false } = {}) {
    let structural = false;
    const seen = new Set();
    for (const m of messages || []) {
      if (!m || !m.id) continue;
      seen.add(m.id);
      const rec = records.get(m.id);
      if (!rec) {
        insert(m);
        structural = true;
        continue;
      }
      // Stored messages only change through a revert (activities): compare a
      // cheap signature first so a 1000-message snapshot costs little.
      if (!String(m.id).startsWith('pending_') && rec.sig === cheapSig(m)) continue;
      const json = JSON.stringify(m);
      rec.sig = cheapSig(m);
      if (json === rec.json) continue;
      const moved = seqOf(rec.msg) !== seqOf(m) || segmentKey(rec.msg) !== segmentKey(m);
      rec.msg = m;
      rec.json = json;
      if (moved) {
        remove(m.id);
        insert(m);
        structural = true;
      } else {
        renderArticle(rec);
      }
    }
    if (authoritativeTail) {
      for (const id of [...order]) {
        if (id.startsWith('pending_') && !seen.has(id)) {
          remove(id);
          structural = true;
        }
      }
    }
    if (structural) {
      updateBoundaries();
      empty.hidden = order.length > 0;
      if (onChange) onChange();
    }
    return structural;
  }

  return {
    el: log,
    approvalsEl: tail,
    merge,
    /** Drops a live answer (pending_<run id>) whose stored message arrived. */
    drop(id) {
      if (!records.has(id)) return;
      remove(id);
      updateBoundaries();
      empty.hidden = order.length > 0;
    },
    /** Messages in order. */
    messages: () => order.map((id) => records.get(id).msg),
    last: () => (order.length ? records.get(order[order.length - 1]).msg : null),
    firstSequence: () => {
      for (const id of order) {
        const s = records.get(id).msg.sequence;
        if (typeof s === 'number') return s;
      }
      return null;
    },
  };
}
