// Target catalog: models from GET /v1/models joined with provider readiness from
// GET /hecate/v1/providers/status, and agent adapters from GET /hecate/v1/agent-adapters.

import { get, paths } from './api.js';

const BLOCKED_TEXT = {
  credential_missing: 'its provider has no credential',
  provider_rate_limited: 'its provider is rate-limited and cooling down',
  circuit_open: 'its provider failed repeatedly and is cooling down',
  provider_unhealthy: 'its provider does not answer',
  no_models: 'its provider lists no models',
  provider_disabled: 'its provider is disabled in the configuration',
  self_referential: 'its provider points back at this Hecate, so a request would loop',
};

/** Human text for a routing_blocked_reason. */
export function blockedText(reason) {
  return BLOCKED_TEXT[reason] || (reason ? `its provider is not routing-ready (${reason})` : 'its provider is not routing-ready');
}

/** Loads models with readiness: [{id, provider, model, ready, reason, action}]. */
export async function loadModels(signal) {
  const [models, status] = await Promise.allSettled([
    get(paths.models, { signal }),
    get(paths.providers, { signal }),
  ]);
  if (models.status === 'rejected') throw models.reason;
  const providers = new Map();
  if (status.status === 'fulfilled') {
    for (const p of (status.value && status.value.data) || []) providers.set(p.name, p);
  }
  const out = [];
  const seen = new Set();
  for (const m of (models.value && models.value.data) || []) {
    const meta = m.metadata || {};
    const provider = meta.provider || m.owned_by || '';
    const model = meta.model || m.id;
    const id = provider ? `${provider}/${model}` : m.id;
    if (seen.has(id)) continue;
    seen.add(id);
    const p = providers.get(provider);
    const ready = p ? p.routing_ready !== false : true;
    let action = '';
    if (p && Array.isArray(p.readiness_checks)) {
      const blocked = p.readiness_checks.find((c) => c.status === 'blocked' && c.operator_action);
      if (blocked) action = blocked.operator_action;
    }
    out.push({ id, provider, model, ready, reason: p ? p.routing_blocked_reason : null, action, isDefault: Boolean(meta.default) });
  }
  out.sort((a, b) => Number(b.ready) - Number(a.ready) || Number(b.isDefault) - Number(a.isDefault) || a.id.localeCompare(b.id));
  return out;
}

/** Loads adapters with readiness: [{id, name, ready, state, fix, raw}]. */
export async function loadAdapters(signal) {
  const res = await get(paths.adapters, { signal });
  return ((res && res.data) || []).map((a) => {
    const installed = a.available !== false && a.status !== 'missing';
    const authOk = a.auth_status === 'ok' || a.auth_status === 'unknown';
    let state = installed ? (authOk ? 'ready' : a.auth_status === 'billing' ? 'billing problem' : 'not signed in') : 'not installed';
    if (installed && a.version_outside_range) state += ', version outside supported range';
    let fix = '';
    if (!installed) {
      fix = a.managed && a.managed_package
        ? `Install it: hecate adapters install ${a.id} (npm package ${a.managed_package}), or put \`${a.command}\` on PATH.`
        : `Install \`${a.command}\` and put it on PATH.`;
    } else if (!authOk) {
      fix = [a.auth_error, a.auth_hint].filter(Boolean).join(' — ');
    }
    return { id: a.id, name: a.name || a.id, ready: installed && authOk, state, fix, raw: a };
  });
}
