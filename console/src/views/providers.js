// The Providers page (#/providers, #/providers/<name>): each configured provider
// with its readiness checklist (credentials, models, health, routing — each
// check's status and, when it needs one, its operator_action), kind, base URL,
// models, and the router's view of it (circuit, cooldown, failures in a row,
// average answer time) from GET /hecate/v1/providers/status; the discovered
// models with their capabilities, an override form and a probe
// (provider-models.js); the presets with their env snippets and local
// discovery (provider-presets.js). Refreshed on "Refresh" only, never on a timer.

import { get, paths, isAbort } from '../api.js';
import { h, alertBox, showError, clearAlert, focusEl, formatDuration, uid } from '../dom.js';
import { mountModels } from './provider-models.js';
import { mountPresets, mountDiscovery } from './provider-presets.js';

/** What a routing_blocked_reason means, in words. */
const ROUTING_TEXT = {
  credential_missing: 'no credential is configured',
  provider_disabled: 'it is disabled in the configuration',
  provider_rate_limited: 'it answered 429 and is cooling down',
  circuit_open: 'it failed repeatedly; its circuit is open',
  provider_unhealthy: 'it does not answer',
  self_referential: 'its base URL points back at this Hecate',
  no_models: 'it serves no model',
};

const CHECK_TITLE = { credentials: 'Credentials', models: 'Models', health: 'Health', routing: 'Routing' };

function badge(text, kind) {
  return h('span', { class: `badge provider-${kind}`, text });
}

function checkItem(c) {
  return h('li', { class: 'provider-check', dataset: { check: c.name, status: c.status, reason: c.reason } },
    h('strong', { text: CHECK_TITLE[c.name] || c.name }), ' ',
    badge(c.status, c.status), ' ',
    h('code', { class: 'provider-reason', text: c.reason }),
    h('p', { class: 'provider-check-message', text: c.message }),
    c.operator_action ? h('p', { class: 'alert-action provider-action', text: c.operator_action }) : null);
}

function healthList(p) {
  const hs = p.health || {};
  const rows = [
    ['Circuit', hs.circuit || 'closed'],
    ['Failures in a row', String(hs.consecutive_failures ?? 0)],
    ['Cooldown left', hs.cooldown_remaining_ms ? formatDuration(hs.cooldown_remaining_ms) : 'none'],
    ['Average answer time', hs.average_latency_ms !== undefined
      ? `${formatDuration(hs.average_latency_ms)} over ${hs.latency_samples} answer(s)`
      : 'no answer yet'],
    ['Slow from', hs.slow_after_ms !== undefined ? formatDuration(hs.slow_after_ms) : ''],
  ];
  return h('dl', { class: 'provider-health', 'aria-label': `Health of ${p.name}` },
    rows.flatMap(([k, v]) => [h('dt', { text: k }), h('dd', { text: v })]));
}

function providerSection(p) {
  const id = uid('provider');
  const ready = p.routing_ready === true;
  const blocked = p.readiness_checks.filter((c) => c.status === 'blocked');
  const actions = [...new Set(blocked.map((c) => c.operator_action).filter(Boolean))];
  // A loop back to Hecate blocks routing as provider_unhealthy; say which.
  const why = blocked.some((c) => c.reason === 'self_referential') ? 'self_referential' : p.routing_blocked_reason;
  const verdict = ready
    ? h('p', { class: 'provider-verdict', dataset: { ready: 'true' } }, badge('routing-ready', 'ok'), ' The router may send it traffic.')
    : h('div', { class: 'provider-verdict', dataset: { ready: 'false' } },
      h('p', {}, badge('blocked', 'blocked'), ' ',
        `The router skips it: ${ROUTING_TEXT[why] || why || 'not routing-ready'}`,
        ' (', h('code', { text: p.routing_blocked_reason || 'unknown' }), ').'),
      actions.map((a) => h('p', { class: 'alert-action provider-action', text: a })));
  return h('section', {
    class: 'provider', 'aria-labelledby': id,
    dataset: { provider: p.name, status: p.status, ready: String(ready), reason: p.routing_blocked_reason || '' },
  },
  h('h3', { id, text: p.name }),
  h('p', { class: 'session-meta' },
    badge(p.kind, 'kind'), h('span', { text: p.protocol }), badge(p.status, p.status),
    h('code', { class: 'provider-url', text: p.base_url }),
    h('span', { text: `credentials: ${p.credential_state}` })),
  verdict,
  h('ul', { class: 'provider-checks', 'aria-label': `Readiness of ${p.name}` }, p.readiness_checks.map(checkItem)),
  healthList(p),
  h('p', { class: 'provider-models' }, h('strong', { text: `Models (${p.model_count}): ` }),
    p.models.length ? p.models.join(', ') : 'none known'));
}

export function mountProviders(root, params = {}) {
  const ctrl = new AbortController();
  const heading = h('h1', { text: 'Providers' });
  const alert = alertBox();
  const summary = h('p', { class: 'run-status', role: 'status' });
  const refresh = h('button', { type: 'button', text: 'Refresh' });
  const list = h('div', { class: 'provider-list', 'aria-busy': 'true' });
  const models = h('div', {});
  const presets = h('div', {});
  const discovery = h('div', {});
  root.replaceChildren(heading, h('div', { class: 'actions' }, refresh), alert, summary,
    h('h2', { text: 'Configured providers' }), list,
    h('h2', { text: 'Models and capabilities' }), models,
    h('h2', { text: 'Presets' }), presets,
    h('h2', { text: 'Local servers' }), discovery);

  const wanted = params.rest && params.rest[0] ? decodeURIComponent(params.rest[0]) : '';

  async function loadStatus() {
    clearAlert(alert);
    list.setAttribute('aria-busy', 'true');
    summary.textContent = 'Checking the providers…';
    try {
      const rows = (await get(paths.providers, { signal: ctrl.signal })).data || [];
      list.replaceChildren(...rows.map(providerSection));
      if (!rows.length) list.append(h('p', { class: 'hint', text: 'No provider is configured: pick a preset below and set its variables.' }));
      const ready = rows.filter((r) => r.routing_ready).length;
      summary.textContent = `${rows.length} provider(s), ${ready} routing-ready, ${rows.length - ready} blocked.`;
      if (wanted) {
        const target = [...list.querySelectorAll('section.provider')].find((s) => s.dataset.provider === wanted);
        if (target) focusEl(target.querySelector('h3'));
      }
    } catch (err) {
      summary.textContent = '';
      if (!isAbort(err)) showError(alert, err);
    } finally {
      list.removeAttribute('aria-busy');
    }
  }

  const modelsView = mountModels(models, ctrl.signal);
  function loadAll() {
    loadStatus();
    modelsView.reload();
    mountDiscovery(discovery, ctrl.signal);
  }
  refresh.addEventListener('click', loadAll);
  mountPresets(presets, ctrl.signal);
  loadAll();
  if (!wanted) focusEl(heading);
  return { unmount: () => ctrl.abort() };
}
