// The Agents page (#/agents): being built.

import { h, focusEl } from '../dom.js';

export function mountAgents(root) {
  const heading = h('h1', { text: 'Agents' });
  root.replaceChildren(heading);
  focusEl(heading);
  return null;
}
