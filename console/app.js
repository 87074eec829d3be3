// The console's entry point: builds the chrome (skip link, "Main" navigation with
// the pending-approval count, danger banner), wires the router to the views and
// keeps the current nav link marked.

import { h, focusEl } from './src/dom.js';
import { startRouter } from './src/router.js';
import { initStats, refreshStats } from './src/stats.js';

const main = document.getElementById('main');
const banner = document.getElementById('danger-banner');
const nav = document.getElementById('main-nav');
const links = {
  chats: nav.querySelector('a[data-nav="chats"]'),
  new: nav.querySelector('a[data-nav="new"]'),
  tasks: nav.querySelector('a[data-nav="tasks"]'),
  agents: nav.querySelector('a[data-nav="agents"]'),
  providers: nav.querySelector('a[data-nav="providers"]'),
  traces: nav.querySelector('a[data-nav="traces"]'),
  mcp: nav.querySelector('a[data-nav="mcp"]'),
  memory: nav.querySelector('a[data-nav="memory"]'),
  approvals: nav.querySelector('a[data-nav="approvals"]'),
  grants: nav.querySelector('a[data-nav="grants"]'),
  keys: nav.querySelector('a[data-nav="keys"]'),
};

function placeholder(title, text) {
  return (root) => {
    const heading = h('h1', { text: title });
    root.replaceChildren(heading, h('p', { text }), h('p', {}, h('a', { href: '#/chats', text: 'Back to chats' })));
    focusEl(heading);
    document.title = `${title} · Hecate`;
    return null;
  };
}

let first = true;
const TITLES = {
  chats: 'Chats', new: 'New chat', tasks: 'Tasks', agents: 'Agents', providers: 'Providers',
  traces: 'Traces', mcp: 'MCP', memory: 'Memory', approvals: 'Approvals', grants: 'Grants',
  keys: 'Keys',
};

// Each view is its own module graph, loaded when its page is first opened:
// the shell starts without the other pages' code. `deps` are the modules the
// view imports, directly or not, beyond the shell's own (this file's imports);
// they are preloaded beside the view so its imports are not fetched one level
// at a time. tests/e2e/http_console.rs checks each list against the imports.
const VIEWS = {
  chats: { module: 'views/chats.js', deps: ['queue.js'] },
  new: { module: 'views/new-chat.js', deps: ['targets.js'] },
  chat: {
    module: 'views/chat.js',
    deps: ['../vendor/eventsource-parser/errors.js', '../vendor/eventsource-parser/parse.js',
      '../vendor/marked.esm.js', 'markdown.js', 'queue.js', 'stream.js', 'targets.js',
      'views/approvals.js', 'views/composer.js', 'views/files.js', 'views/transcript.js'],
  },
  approvals: { module: 'views/approvals.js', deps: [] },
  grants: { module: 'views/grants.js', deps: [] },
  keys: { module: 'views/keys.js', deps: [] },
  tasks: {
    module: 'views/tasks.js',
    deps: ['../vendor/eventsource-parser/errors.js', '../vendor/eventsource-parser/parse.js',
      'stream.js', 'targets.js', 'views/events-tail.js', 'views/task-form.js'],
  },
  task: {
    module: 'views/task.js',
    deps: ['../vendor/eventsource-parser/errors.js', '../vendor/eventsource-parser/parse.js',
      'run-stream.js', 'stream.js', 'targets.js', 'views/approvals.js', 'views/events-tail.js',
      'views/files.js', 'views/task-form.js', 'views/tasks.js'],
  },
  traces: { module: 'views/traces.js', deps: ['chart.js'] },
  agents: { module: 'views/agents.js', deps: [] },
  providers: {
    module: 'views/providers.js',
    deps: ['views/provider-models.js', 'views/provider-presets.js'],
  },
  mcp: { module: 'views/mcp.js', deps: [] },
  memory: { module: 'views/memory.js', deps: [] },
};
const ROUTE_VIEW = { trace: 'traces' };

const preloaded = new Set();
function preload(file) {
  if (preloaded.has(file)) return;
  preloaded.add(file);
  document.head.append(h('link', { rel: 'modulepreload', href: new URL(`./src/${file}`, import.meta.url).href }));
}

/** Loads a view's module (its imports preloaded beside it). */
function loadView(name) {
  const view = VIEWS[name];
  for (const dep of view.deps) preload(dep);
  return import(`./src/${view.module}`);
}

// A page's code is fetched as soon as a pointer or the keyboard reaches its
// link, so that a click rarely waits for it; nothing is fetched in the
// background otherwise (an idle page makes no requests).
function loadOnIntent(ev) {
  const link = ev.target.closest && ev.target.closest('a[data-nav]');
  if (link && VIEWS[link.dataset.nav]) loadView(link.dataset.nav).catch(() => {});
}
nav.addEventListener('pointerover', loadOnIntent);
nav.addEventListener('focusin', loadOnIntent);

const MOUNTS = {
  chats: (m) => (root) => m.mountChats(root),
  new: (m) => (root) => m.mountNewChat(root),
  chat: (m) => (root, p) => m.mountChat(root, p.id),
  approvals: (m) => (root) => m.mountApprovals(root),
  grants: (m) => (root) => m.mountGrants(root),
  keys: (m) => (root) => m.mountKeys(root),
  tasks: (m) => (root, p) => m.mountTasks(root, p.query),
  task: (m) => (root, p) => m.mountTask(root, p.id, p.query),
  traces: (m) => (root, p) => m.mountTraces(root, { query: p.query }),
  trace: (m) => (root, p) => m.mountTraces(root, { query: p.query, requestId: p.id }),
  agents: (m) => (root, p) => m.mountAgents(root, p),
  providers: (m) => (root, p) => m.mountProviders(root, p),
  mcp: (m) => (root, p) => m.mountMcp(root, p),
  memory: (m) => (root, p) => m.mountMemory(root, p),
};
const views = { notfound: async () => placeholder('Not found', 'This page does not exist.') };
for (const [route, pick] of Object.entries(MOUNTS)) {
  views[route] = async () => pick(await loadView(ROUTE_VIEW[route] || route));
}

initStats(links.approvals, banner);

// The stats call runs beside the first view's requests: when the server wants a
// token, the first 401 opens the "Access token" dialog and the other requests
// wait for it (api.js), so nothing is asked twice.
refreshStats();

startRouter(main, views, {
  onLoadError(root) {
    const heading = h('h1', { text: 'This page could not be loaded' });
    root.replaceChildren(heading, h('p', { text: 'Its code did not arrive from the server. Reload the page to try again.' }));
    focusEl(heading);
  },
  onRoute(route) {
    const parent = { chat: 'chats', task: 'tasks', trace: 'traces' };
    const active = parent[route.name] || route.name;
    for (const [name, a] of Object.entries(links)) {
      if (name === active) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    if (TITLES[route.name]) document.title = `${TITLES[route.name]} · Hecate`;
    if (!first) refreshStats();
    first = false;
  },
});

// Unhandled rejections from aborted requests are expected on navigation.
window.addEventListener('unhandledrejection', (ev) => {
  if (ev.reason && ev.reason.name === 'AbortError') ev.preventDefault();
});
