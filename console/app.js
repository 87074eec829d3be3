// The console's entry point: builds the chrome (skip link, "Main" navigation with
// the pending-approval count, danger banner), wires the router to the views and
// keeps the current nav link marked.

import { h, focusEl } from './src/dom.js';
import { startRouter } from './src/router.js';
import { initStats, refreshStats } from './src/stats.js';
import { mountChats } from './src/views/chats.js';
import { mountNewChat } from './src/views/new-chat.js';
import { mountChat } from './src/views/chat.js';
import { mountApprovals } from './src/views/approvals.js';
import { mountGrants } from './src/views/grants.js';
import { mountTasks } from './src/views/tasks.js';
import { mountTask } from './src/views/task.js';
import { mountTraces } from './src/views/traces.js';
import { mountAgents } from './src/views/agents.js';
import { mountProviders } from './src/views/providers.js';
import { mountMcp } from './src/views/mcp.js';
import { mountMemory } from './src/views/memory.js';

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
};

initStats(links.approvals, banner);

// One first call settles the token (a 401 asks once) before the views load.
await refreshStats();

startRouter(main, {
  chats: (root) => mountChats(root),
  new: (root) => mountNewChat(root),
  chat: (root, p) => mountChat(root, p.id),
  approvals: (root) => mountApprovals(root),
  grants: (root) => mountGrants(root),
  tasks: (root, p) => mountTasks(root, p.query),
  task: (root, p) => mountTask(root, p.id, p.query),
  traces: (root, p) => mountTraces(root, { query: p.query }),
  trace: (root, p) => mountTraces(root, { query: p.query, requestId: p.id }),
  agents: (root, p) => mountAgents(root, p),
  providers: (root, p) => mountProviders(root, p),
  mcp: (root, p) => mountMcp(root, p),
  memory: (root, p) => mountMemory(root, p),
  notfound: placeholder('Not found', 'This page does not exist.'),
}, {
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
