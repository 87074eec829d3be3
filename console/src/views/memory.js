// The Memory and flows page (#/memory): being built.

import { h, focusEl } from '../dom.js';

export function mountMemory(root) {
  const heading = h('h1', { text: 'Memory and flows' });
  root.replaceChildren(heading);
  focusEl(heading);
  return null;
}
