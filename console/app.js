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

const main = document.getElementById('main');
const banner = document.getElementById('danger-banner');
const nav = document.getElementById('main-nav');
const links = {
  chats: nav.querySelector('a[data-nav="chats"]'),
  new: nav.querySelector('a[data-nav="new"]'),
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
const TITLES = { chats: 'Chats', new: 'New chat', approvals: 'Approvals', grants: 'Grants' };

initStats(links.approvals, banner);

// One first call settles the token (a 401 asks once) before the views load.
await refreshStats();

startRouter(main, {
  chats: (root) => mountChats(root),
  new: (root) => mountNewChat(root),
  chat: (root, p) => mountChat(root, p.id),
  approvals: (root) => mountApprovals(root),
  grants: (root) => mountGrants(root),
  task: (root, p) => placeholder('Task', `The task view for ${p.id} is not part of this console yet. Use \`hecate tasks show ${p.id}\` or GET /hecate/v1/tasks/${p.id}.`)(root),
  notfound: placeholder('Not found', 'This page does not exist.'),
}, {
  onRoute(route) {
    const active = route.name === 'chat' ? 'chats' : route.name;
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
