// The "Queued next" store: prompts sent while a turn was busy, kept per session in
// localStorage (key hecate.queue.<session id>) with the target chosen when queued.

const PREFIX = 'hecate.queue.';

function read(sessionId) {
  try {
    const raw = localStorage.getItem(PREFIX + sessionId);
    const list = raw ? JSON.parse(raw) : [];
    return Array.isArray(list) ? list.filter((e) => e && typeof e.content === 'string') : [];
  } catch {
    return [];
  }
}

function write(sessionId, list) {
  try {
    if (list.length) localStorage.setItem(PREFIX + sessionId, JSON.stringify(list));
    else localStorage.removeItem(PREFIX + sessionId);
  } catch {
    /* storage full or disabled: the queue lives in memory only */
  }
}

/** The queue of one session. */
export function sessionQueue(sessionId) {
  return {
    list: () => read(sessionId),
    add(content, target) {
      const list = read(sessionId);
      const entry = { id: `q_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`, content, target: target || {}, queued_at: new Date().toISOString() };
      list.push(entry);
      write(sessionId, list);
      return entry;
    },
    unshift(entry) {
      write(sessionId, [entry, ...read(sessionId).filter((e) => e.id !== entry.id)]);
    },
    update(id, content) {
      write(sessionId, read(sessionId).map((e) => (e.id === id ? { ...e, content } : e)));
    },
    remove(id) {
      write(sessionId, read(sessionId).filter((e) => e.id !== id));
    },
    shift() {
      const list = read(sessionId);
      const first = list.shift() || null;
      write(sessionId, list);
      return first;
    },
    clear: () => write(sessionId, []),
  };
}

/** Drops the queues of sessions that no longer exist (`known`: ids that do). */
export function pruneQueues(known) {
  try {
    const stale = [];
    for (let i = 0; i < localStorage.length; i += 1) {
      const key = localStorage.key(i);
      if (key && key.startsWith(PREFIX) && !known.has(key.slice(PREFIX.length))) stale.push(key);
    }
    for (const key of stale) localStorage.removeItem(key);
  } catch {
    /* storage unavailable */
  }
}
