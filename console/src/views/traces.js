// The traces page (#/traces, #/traces/<request id>): being built.

import { h, focusEl } from '../dom.js';

export function mountTraces(root) {
  const heading = h('h1', { text: 'Traces' });
  root.replaceChildren(heading);
  focusEl(heading);
  return null;
}
