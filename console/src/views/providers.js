// The Providers page (#/providers): being built.

import { h, focusEl } from '../dom.js';

export function mountProviders(root) {
  const heading = h('h1', { text: 'Providers' });
  root.replaceChildren(heading);
  focusEl(heading);
  return null;
}
