// The MCP page (#/mcp): being built.

import { h, focusEl } from '../dom.js';

export function mountMcp(root) {
  const heading = h('h1', { text: 'MCP' });
  root.replaceChildren(heading);
  focusEl(heading);
  return null;
}
