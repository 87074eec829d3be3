// Task Detail (#/tasks/<id>): being built.

import { h, focusEl } from '../dom.js';

export function mountTask(root, id) {
  const heading = h('h1', { text: `Task ${id}` });
  root.replaceChildren(heading);
  focusEl(heading);
  return null;
}
