// The hash router: maps #/chats, #/new, #/chats/<id>, #/approvals, #/grants (and
// #/tasks/<id>, a placeholder until the task view exists) to views, unmounting the
// previous one.

/** Parses a hash into {name, params}. */
export function parseRoute(hash) {
  const path = (hash || '').replace(/^#/, '') || '/chats';
  const parts = path.split('/').filter(Boolean).map((p) => {
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
  if (parts[0] === 'tasks' && parts.length >= 2) return { name: 'task', params: { id: parts[1] } };
  return { name: 'notfound', params: { path } };
}

/** Starts routing: `views` maps a route name to mount(root, params) -> {unmount}. */
export function startRouter(root, views, { onRoute } = {}) {
  let current = null;
  function go() {
    const route = parseRoute(location.hash);
    if (current && current.unmount) {
      try {
        current.unmount();
      } catch {
        /* a view that fails to clean up must not block the next one */
      }
    }
    current = null;
    root.replaceChildren();
    const mount = views[route.name] || views.notfound;
    current = mount(root, route.params) || null;
    if (onRoute) onRoute(route);
  }
  window.addEventListener('hashchange', go);
  go();
}
