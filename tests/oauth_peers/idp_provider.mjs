// The team's identity provider for Hecate's `[server.idp]` tests: the npm
// `oidc-provider` (pinned by scripts/test-deps/oauth.sh) issuing JWT access
// tokens (RFC 9068) through the client_credentials grant, for resource
// indicators (RFC 8707): `HECATE_RESOURCE` (Hecate's audience) and
// `https://other.test/mcp` (another resource server). Run from the directory
// holding the installed node_modules. Prints one JSON line
// {issuer, client_id, client_secret}, then serves.
// Env: HECATE_RESOURCE (required), ACCESS_TOKEN_ALG (RS256 or ES256; default RS256).
import crypto from 'node:crypto';
import express from 'express';
import Provider, { errors } from 'oidc-provider';

const resource = process.env.HECATE_RESOURCE;
if (!resource) throw new Error('HECATE_RESOURCE is required');
const alg = process.env.ACCESS_TOKEN_ALG || 'RS256';
const resources = new Set([resource, 'https://other.test/mcp']);

// Stdout carries the one JSON line; everything the library says goes to stderr.
for (const level of ['log', 'info', 'warn']) {
  console[level] = (...args) => process.stderr.write(`${args.join(' ')}\n`);
}

// Signing keys made for this run (no development keystore).
function privateJwk(type, options, kid) {
  const { privateKey } = crypto.generateKeyPairSync(type, options);
  return { ...privateKey.export({ format: 'jwk' }), kid, use: 'sig' };
}
const jwks = {
  keys: [
    { ...privateJwk('rsa', { modulusLength: 2048 }, 'rs1'), alg: 'RS256' },
    { ...privateJwk('ec', { namedCurve: 'P-256' }, 'ec1'), alg: 'ES256' },
  ],
};

const app = express();
const server = await new Promise((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});
const issuer = `http://127.0.0.1:${server.address().port}`;
const client = { client_id: 'hecate-interop', client_secret: 'interop-secret-0123456789' };

const provider = new Provider(issuer, {
  jwks,
  clients: [
    {
      ...client,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  scopes: ['openid'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (!resources.has(indicator)) throw new errors.InvalidTarget();
        return {
          scope: 'hecate:read hecate:operator hecate:admin',
          audience: indicator,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg } },
        };
      },
    },
  },
});
app.use(provider.callback());

process.stdout.write(`${JSON.stringify({ issuer, ...client })}\n`);
