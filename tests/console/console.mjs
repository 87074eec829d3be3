// The console's browser scenarios, run by tests/interop/console_browser.rs against
// a real `hecate serve` (HECATE_URL; HECATE_GUARDED_URL with HECATE_TOKEN), the
// fixture model and the fixture ACP agent, in Debian's Chromium through
// playwright-core (PLAYWRIGHT). Everything is done through the page; the API is
// used only to set up and to check. Any browser console error or page error not
// expected by the scenario fails it. Screenshots go to SHOTS; the loopback
// figures are printed at the end (no timing assertions). ONLY=<part of a name>
// runs the matching scenarios alone.

import { runAll } from './harness.mjs';
import { scenarios as chats } from './chats.mjs';
import { scenarios as tasks } from './tasks.mjs';
import { scenarios as mcp } from './mcp.mjs';
import { scenarios as memory } from './memory.mjs';
import { scenarios as agents } from './agents.mjs';
import { scenarios as traces } from './traces.mjs';
import { scenarios as providers } from './providers.mjs';
import { scenarios as keys } from './keys.mjs';

await runAll({ ...chats, ...tasks, ...mcp, ...memory, ...agents, ...traces, ...providers, ...keys });
