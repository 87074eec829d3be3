// A real MCP client for Hecate's `[server.idp]` tests: the official TypeScript
// SDK's Streamable HTTP client listing the tools of an MCP server. Run from the
// directory holding the installed node_modules, as
//   node idp_client.mjs oauth URL ISSUER CLIENT_ID CLIENT_SECRET SCOPE
//     signs in by itself: the server's 401 names its RFC 9728 metadata, which
//     names the authorization server; a client_credentials grant for the
//     metadata's resource gets the token;
//   node idp_client.mjs bearer URL TOKEN
//     sends a token it was given.
// Prints one JSON line: {ok, tools, token_claims} or {ok: false, error}.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

for (const level of ['log', 'info', 'warn']) {
  console[level] = (...args) => process.stderr.write(`${args.join(' ')}\n`);
}

const [mode, url, ...rest] = process.argv.slice(2);
let authProvider;
let requestInit;
if (mode === 'oauth') {
  const [issuer, clientId, clientSecret, scope] = rest;
  authProvider = new ClientCredentialsProvider({ clientId, clientSecret, scope, expectedIssuer: issuer });
} else if (mode === 'bearer') {
  requestInit = { headers: { Authorization: `Bearer ${rest[0]}` } };
} else {
  throw new Error(`unknown mode ${mode}`);
}

function claimsOf(token) {
  const payload = token?.split('.')[1];
  return payload ? JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) : null;
}

const client = new Client({ name: 'idp-interop', version: '1.0.0' });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider, requestInit }));
  const { tools } = await client.listTools();
  const token = authProvider ? (await authProvider.tokens())?.access_token : rest[0];
  process.stdout.write(
    `${JSON.stringify({ ok: true, tools: tools.map((t) => t.name), token_claims: claimsOf(token) })}\n`,
  );
  await client.close();
} catch (e) {
  process.stdout.write(`${JSON.stringify({ ok: false, error: String(e?.message ?? e) })}\n`);
}
process.exit(0);
