// The tasks page (#/tasks): being built.

import { h, focusEl } from '../dom.js';

export function mountTasks(root) {
  const heading = h('h1', { text: 'Tasks' });
  root.replaceChildren(heading);
  focusEl(heading);
  return null;
}
