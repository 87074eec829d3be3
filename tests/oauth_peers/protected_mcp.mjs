// An OAuth-protected MCP server for Hecate's sign-in tests: the npm
// `oidc-provider` (pinned by scripts/test-deps/oauth.sh) as the authorization
// server, and an MCP server built with the official TypeScript SDK that checks
// bearer tokens against it (requireBearerAuth). Run from the directory holding
// the installed node_modules. Prints one JSON line with its URLs, then serves:
//   /mcp        the protected server (resource `${base}/mcp`, tool `whoami`)
//   /other/mcp  a second resource on the same authorization server
//   /evil/mcp   a resource whose metadata names an authorization server whose
//               discovery document claims another issuer
//   POST ${issuer}/admin/revoke  revokes every grant (tokens die with them)
// The tool answers `hello NAME client CLIENT_ID scopes SCOPES` from the token.
// Env: ACCESS_TOKEN_TTL (seconds, default 3600);
//   OAUTH_REGISTRATION=off   no dynamic client registration (no registration_endpoint);
//   OAUTH_STATIC_CLIENT=JSON {client_id, client_secret, redirect_uri, auth_method}:
//       a pre-registered confidential client; `auth_method` (client_secret_basic
//       or client_secret_post) is then the only secret-based token endpoint
//       authentication method the server advertises and accepts;
//   OAUTH_CIMD=on            client ID metadata documents (draft-02) are supported;
//       the document of ${CIMD_URL} is served to the provider from here (its
//       fetch is answered locally: the URL is https and never dialled).
import express from 'express';
import Provider, { errors } from 'oidc-provider';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';

const ttl = Number(process.env.ACCESS_TOKEN_TTL || 3600);
const registration = process.env.OAUTH_REGISTRATION !== 'off';
const staticClient = process.env.OAUTH_STATIC_CLIENT ? JSON.parse(process.env.OAUTH_STATIC_CLIENT) : null;
const cimd = process.env.OAUTH_CIMD === 'on';
const CIMD_URL = 'https://client.hecate.test/oauth/client.json';
const cimdDocument = {
  client_id: CIMD_URL,
  client_name: 'Hecate (test)',
  application_type: 'native',
  redirect_uris: ['http://127.0.0.1/callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
};

// Stdout carries the one line of URLs; everything the libraries say goes to stderr.
for (const level of ['log', 'info', 'warn']) {
  console[level] = (...args) => process.stderr.write(`${args.join(' ')}\n`);
}

function listen(app) {
  return new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
}

const asApp = express();
const mcpApp = express();
const asServer = await listen(asApp);
const mcpServer = await listen(mcpApp);
const issuer = `http://127.0.0.1:${asServer.address().port}`;
const base = `http://127.0.0.1:${mcpServer.address().port}`;
const resources = { main: `${base}/mcp`, other: `${base}/other/mcp`, evil: `${base}/evil/mcp` };
const grants = new Set();

const provider = new Provider(issuer, {
  clients: staticClient
    ? [{
        client_id: staticClient.client_id,
        client_secret: staticClient.client_secret,
        redirect_uris: [staticClient.redirect_uri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: staticClient.auth_method,
      }]
    : [],
  ...(staticClient ? { clientAuthMethods: ['none', staticClient.auth_method] } : {}),
  scopes: ['openid', 'offline_access', 'mcp', 'mcp:extra'],
  fetch: (url, options) => {
    if (String(url) === CIMD_URL) {
      return Promise.resolve(new Response(JSON.stringify(cimdDocument), {
        status: 200,
        headers: { 'content-type': 'application/json' },
      }));
    }
    return globalThis.fetch(url, options);
  },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: registration },
    clientIdMetadataDocument: { enabled: cimd, ack: 'draft-02' },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resources.main && indicator !== resources.other) {
          throw new errors.InvalidTarget();
        }
        return { scope: 'mcp mcp:extra', audience: indicator, accessTokenTTL: ttl, accessTokenFormat: 'opaque' };
      },
    },
  },
  pkce: { required: () => true },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  rotateRefreshToken: true,
  clientDefaults: {
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  },
  findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  cookies: { keys: ['hecate-oauth-peer'] },
});

// The scripted user: signs in as `tester` and consents to what was asked.
asApp.get('/interaction/:uid', async (req, res, next) => {
  try {
    const details = await provider.interactionDetails(req, res);
    const { prompt, params } = details;
    let result;
    if (prompt.name === 'login') {
      result = { login: { accountId: 'tester' } };
    } else {
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
      const d = prompt.details || {};
      if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
      if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(d.missingResourceScopes || {})) {
        grant.addResourceScope(indicator, scopes.join(' '));
      }
      const grantId = await grant.save();
      grants.add(grantId);
      result = { consent: { grantId } };
    }
    await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
  } catch (e) {
    next(e);
  }
});
asApp.post('/admin/revoke', async (req, res) => {
  for (const id of grants) {
    const g = await provider.Grant.find(id);
    if (g) await g.destroy();
  }
  grants.clear();
  res.json({ revoked: true });
});
asApp.use(provider.callback());

function verifier(resource) {
  return {
    async verifyAccessToken(token) {
      const at = await provider.AccessToken.find(token);
      if (!at || at.isExpired) throw new InvalidTokenError('unknown, expired or revoked token');
      if (!at.grantId || !(await provider.Grant.find(at.grantId))) {
        throw new InvalidTokenError('the grant was revoked');
      }
      if (at.aud !== resource) throw new InvalidTokenError('the token is for another resource');
      return {
        token,
        clientId: at.clientId,
        scopes: (at.scope || '').split(' ').filter(Boolean),
        expiresAt: at.exp,
        resource: new URL(resource),
      };
    },
  };
}

function metadataPath(resource) {
  return `/.well-known/oauth-protected-resource${new URL(resource).pathname}`;
}

mcpApp.use(express.json());
for (const [name, resource] of Object.entries(resources)) {
  const servers = name === 'evil' ? [`${base}/evil-as`] : [issuer];
  mcpApp.get(metadataPath(resource), (req, res) => {
    res.json({ resource, authorization_servers: servers, scopes_supported: ['mcp'], bearer_methods_supported: ['header'] });
  });
  const auth = requireBearerAuth({
    verifier: verifier(resource),
    requiredScopes: [],
    resourceMetadataUrl: `${base}${metadataPath(resource)}`,
  });
  mcpApp.post(new URL(resource).pathname, auth, async (req, res) => {
    const server = new McpServer({ name: `protected-${name}`, version: '1.0.0' });
    server.registerTool('whoami', { description: 'Says who the bearer token belongs to.' }, async (extra) => ({
      content: [{
        type: 'text',
        text: `hello ${name} client ${extra.authInfo?.clientId ?? 'unknown'} scopes ${(extra.authInfo?.scopes ?? []).join(',')}`,
      }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  mcpApp.get(new URL(resource).pathname, auth, (req, res) => res.status(405).end());
  mcpApp.delete(new URL(resource).pathname, auth, (req, res) => res.status(405).end());
}
// The lying authorization server: its metadata names the real issuer.
mcpApp.get('/.well-known/oauth-authorization-server/evil-as', (req, res) => {
  res.json({
    issuer,
    authorization_endpoint: `${issuer}/auth`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/reg`,
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
  });
});

process.stdout.write(JSON.stringify({ issuer, cimd: CIMD_URL, ...resources }) + '\n');
