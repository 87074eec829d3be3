// The hash router: maps #/chats, #/new, #/chats/<id>, #/approvals, #/grants,
// #/keys, #/tasks, #/tasks/<id>, #/traces, #/traces/<request id>, #/agents,
// #/providers, #/mcp and #/memory (each with optional sub-paths in `params.rest`) to views (query
// parameters after `?` become `params.query`), unmounting the previous one.

/** Parses a hash into {name, params}. */
export function parseRoute(hash) {
  const full = (hash || '').replace(/^#/, '') || '/chats';
  const [path, search = ''] = full.split('?');
  const query = Object.fromEntries(new URLSearchParams(search));
  const parts = (path || '/chats').split('/').filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  if (parts.length === 0 || (parts[0] === 'chats' && parts.length === 1)) return { name: 'chats', params: {} };
  if (parts[0] === 'chats' && parts.length >= 2) return { name: 'chat', params: { id: parts[1] } };
  if (parts[0] === 'new') return { name: 'new', params: {} };
  if (parts[0] === 'approvals') return { name: 'approvals', params: {} };
  if (parts[0] === 'grants') return { name: 'grants', params: {} };
  if (parts[0] === 'keys') return { name: 'keys', params: {} };
  if (parts[0] === 'tasks' && parts.length === 1) return { name: 'tasks', params: { query } };
  if (parts[0] === 'tasks' && parts.length >= 2) return { name: 'task', params: { id: parts[1], query } };
  for (const page of ['agents', 'providers', 'mcp', 'memory']) {
    if (parts[0] === page) return { name: page, params: { query, rest: parts.slice(1) } };
  }
  if (parts[0] === 'traces' && parts.length === 1) return { name: 'traces', params: { query } };
  if (parts[0] === 'traces' && parts.length >= 2) return { name: 'trace', params: { id: parts[1], query } };
  return { name: 'notfound', params: { path } };
}

/**
 * Starts routing: `views` maps a route name to an async loader that answers
 * mount(root, params) -> {unmount}. A view whose code is still loading when the
 * address changes again is never mounted; `onLoadError(root)` shows a loader's
 * failure.
 */
export function startRouter(root, views, { onRoute, onLoadError } = {}) {
  let current = null;
  let generation = 0;
  async function go() {
    const route = parseRoute(location.hash);
    const mine = ++generation;
    if (current && current.unmount) {
      try {
        current.unmount();
      } catch {
        /* a view that fails to clean up must not block the next one */
      }
    }
    current = null;
    root.replaceChildren();
    if (onRoute) onRoute(route);
    const load = views[route.name] || views.notfound;
    let mount;
    try {
      mount = await load();
    } catch {
      if (mine === generation && onLoadError) onLoadError(root);
      return;
    }
    if (mine !== generation) return;
    current = mount(root, route.params) || null;
  }
  window.addEventListener('hashchange', go);
  go();
}
