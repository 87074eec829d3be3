// The traces page (#/traces, #/traces/<request id>): every gateway request
// (GET /hecate/v1/traces) newest first, a page at a time, filtered by session,
// model, provider, status and time (the filters and the page live in the
// address, so a link reproduces the view); the inspector of one request (its
// route candidates in the order the router considered them, with each one's
// outcome and skip or failover reason, timings, tokens, cost, its chat and the
// raw trace); and what the filtered traces cost, per day, provider or model
// (summed by the server, GET /hecate/v1/traces/costs), as an SVG chart with its
// table.

import { get, paths, isAbort } from '../api.js';
import { h, alertBox, showError, clearAlert, field, timeEl, formatDuration, focusEl, uid } from '../dom.js';
import { barChart } from '../chart.js';

const PAGE = 50;
/** The filters the API takes, in the order the address lists them. */
const FILTERS = ['session_id', 'model', 'provider', 'status', 'since', 'until'];
const STATUSES = ['completed', 'failed', 'cancelled'];
const GROUPS = { day: 'day', provider: 'provider', model: 'model' };

const OUTCOME_TEXT = {
  selected: 'answered',
  failed: 'tried, failed',
  skipped: 'skipped',
  unused: 'not needed',
};
const REASON_TEXT = {
  policy_denied: 'a deny pattern of the routing policy matches it',
  budget_denied: 'the daily budget is spent',
  preflight_price_missing: 'a budget is set and the model has no price',
  capability_missing: 'the model does not call tools and the request offers some',
  provider_rate_limited: 'the provider answered 429 or is cooling down from one',
  circuit_open: 'the provider failed too often; its circuit breaker is open',
  provider_unhealthy: 'the provider failed (5xx, unreachable, or refused the key)',
};
const ROUTE_REASON_TEXT = {
  requested_model: 'the model the client named',
  pinned_provider: 'the provider the client pinned (provider/model)',
  global_default_model: 'the default model (the request named none)',
};

/** Dollars from micro-USD, six decimals (what the cost table totals). */
export function usd(micros) {
  if (typeof micros !== 'number') return '';
  const neg = micros < 0;
  const m = Math.abs(micros);
  const whole = Math.floor(m / 1e6);
  const frac = String(m % 1e6).padStart(6, '0');
  return `${neg ? '-' : ''}$${whole.toLocaleString('en-US')}.${frac}`;
}

/** A short dollar figure for axes and bars. */
function usdShort(micros) {
  const v = micros / 1e6;
  if (v === 0) return '$0';
  if (v >= 100) return `$${v.toFixed(0)}`;
  if (v >= 1) return `$${v.toFixed(2)}`;
  if (v >= 0.01) return `$${v.toFixed(3)}`;
  return `$${v.toPrecision(2)}`;
}

const num = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : '');

/** The address of the list (or of one trace) with `query`. */
function hashOf(query, requestId) {
  const params = new URLSearchParams();
  for (const k of [...FILTERS, 'offset', 'by']) {
    const v = query[k];
    if (v !== undefined && v !== null && v !== '' && !(k === 'offset' && Number(v) === 0) && !(k === 'by' && v === 'day')) {
      params.set(k, String(v));
    }
  }
  const qs = params.toString();
  const path = requestId ? `#/traces/${encodeURIComponent(requestId)}` : '#/traces';
  return qs ? `${path}?${qs}` : path;
}

/** The API filters of `query` (empty ones left out). */
function apiFilters(query) {
  const out = {};
  for (const k of FILTERS) if (query[k]) out[k] = query[k];
  return out;
}

/** The chat a trace belongs to, when it is an Agent Chat session. */
function chatOf(t) {
  if (!t.session_id) return null;
  if (t.client_format === 'agent_chat' || t.session_id.startsWith('agent_chat_')) return t.session_id;
  return null;
}

/** An RFC 3339 time as a datetime-local value (local time, seconds). */
function toLocalInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** A datetime-local value (local time) as RFC 3339 UTC. */
function fromLocalInput(v) {
  if (!v) return '';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

function statusBadge(status) {
  return h('span', { class: `badge status-${status}`, text: status });
}

// The cost chart's last answers (per filter and grouping), kept across the
// remount that opening a trace causes, so selecting rows asks nothing again.
const chartCache = new Map();

/** Chart groups from the API's `groups` by `by`: days oldest first with the
 * days between them as zero bars (over at most a year), others as given
 * (dearest first). Each: {key, label, short, requests, unpriced, tokens, micros}. */
export function chartGroups(apiGroups, by) {
  const zero = (key) => ({ key, label: key, requests: 0, unpriced: 0, tokens: 0, micros: 0 });
  let out = apiGroups.map((g) => ({
    key: g.key, label: g.key, requests: g.requests, unpriced: g.unpriced, tokens: g.tokens, micros: g.cost_micros_usd,
  }));
  if (by !== 'day') return out;
  const byKey = new Map(out.map((g) => [g.key, g]));
  const days = out.filter((g) => /^\d{4}-\d{2}-\d{2}$/.test(g.key));
  if (days.length > 1) {
    const first = Date.parse(`${days[0].key}T00:00:00Z`);
    const last = Date.parse(`${days[days.length - 1].key}T00:00:00Z`);
    const span = Math.round((last - first) / 86400000);
    if (span < 366) {
      const filled = [];
      for (let i = 0; i <= span; i += 1) {
        const key = new Date(first + i * 86400000).toISOString().slice(0, 10);
        filled.push(byKey.get(key) || zero(key));
      }
      out = [...filled, ...out.filter((g) => !days.includes(g))];
    }
  }
  for (const g of out) g.short = g.key.slice(5);
  return out;
}

/** The page. `query`: the address's filters; `requestId`: the trace to inspect. */
export function mountTraces(root, { query = {}, requestId } = {}) {
  const ctrl = new AbortController();
  const offset = Math.max(0, Number.parseInt(query.offset, 10) || 0);
  const by = GROUPS[query.by] || 'day';
  const filters = apiFilters(query);

  const heading = h('h1', { text: 'Traces' });
  const alert = alertBox();
  const totals = h('dl', { class: 'trace-totals', 'aria-label': 'Gateway since this server started' });

  // Filters.
  const sessionIn = h('input', { type: 'text', value: query.session_id || '', autocomplete: 'off', spellcheck: 'false' });
  const modelList = h('datalist', { id: uid('models') });
  const providerList = h('datalist', { id: uid('providers') });
  const modelIn = h('input', { type: 'text', value: query.model || '', list: modelList.id, autocomplete: 'off', spellcheck: 'false' });
  const providerIn = h('input', { type: 'text', value: query.provider || '', list: providerList.id, autocomplete: 'off', spellcheck: 'false' });
  const statusIn = h('select', {},
    h('option', { value: '', text: 'Any status' }),
    STATUSES.map((s) => h('option', { value: s, text: s, selected: query.status === s })));
  const sinceIn = h('input', { type: 'datetime-local', step: '1', value: toLocalInput(query.since) });
  const untilIn = h('input', { type: 'datetime-local', step: '1', value: toLocalInput(query.until) });
  const apply = h('button', { type: 'submit', class: 'primary', text: 'Apply' });
  const clear = h('button', { type: 'button', text: 'Clear filters' });
  const refresh = h('button', { type: 'button', text: 'Refresh' });
  const form = h('form', { class: 'filters trace-filters', role: 'search', 'aria-label': 'Filter traces' },
    field('Session', sessionIn), field('Model', modelIn), field('Provider', providerIn),
    field('Status', statusIn), field('Since', sinceIn), field('Until', untilIn),
    h('div', { class: 'actions' }, apply, clear, refresh), modelList, providerList);

  // The list.
  const note = h('p', { class: 'hint', 'aria-live': 'polite', text: 'Loading…' });
  const tbody = h('tbody');
  const table = h('table', { class: 'traces-table', 'aria-label': 'Traces' },
    h('thead', {}, h('tr', {},
      ['Time', 'Request', 'Client', 'Model', 'Provider', 'Status', 'Duration', 'Tokens', 'Cost', 'Chat']
        .map((c) => h('th', { scope: 'col', text: c })))),
    tbody);
  const newer = h('button', { type: 'button', text: 'Newer', disabled: offset === 0 });
  const older = h('button', { type: 'button', text: 'Older', disabled: true });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Trace pages' }, newer, older);
  const listSection = h('section', { class: 'trace-list', 'aria-label': 'Trace list' },
    note, h('div', { class: 'table-scroll' }, table), pager);

  // The inspector (only with a request id).
  const inspector = requestId ? h('section', { class: 'trace-inspector' }) : null;

  // The cost chart.
  const chartHeadingId = uid('cost');
  const groupSelect = h('select', {},
    h('option', { value: 'day', text: 'Day (UTC)', selected: by === 'day' }),
    h('option', { value: 'provider', text: 'Provider', selected: by === 'provider' }),
    h('option', { value: 'model', text: 'Model', selected: by === 'model' }));
  const recompute = h('button', { type: 'button', text: 'Recompute' });
  const chartNote = h('p', { class: 'hint', 'aria-live': 'polite' });
  const chartBox = h('div', { class: 'chart-box' });
  const costSection = h('section', { class: 'trace-costs', 'aria-labelledby': chartHeadingId },
    h('h2', { id: chartHeadingId, text: 'Cost' }),
    h('div', { class: 'chart-controls' }, field('Group cost by', groupSelect), h('div', { class: 'actions' }, recompute)),
    chartNote, chartBox);

  const layout = h('div', { class: requestId ? 'traces-layout with-inspector' : 'traces-layout' }, listSection, inspector);
  root.replaceChildren(heading, totals, form, alert, layout, costSection);

  // --- filters and paging change the address; the router mounts the page again.
  function go(next, id) {
    const hash = hashOf(next, id);
    if (location.hash === hash) return;
    location.hash = hash;
  }
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    go({
      session_id: sessionIn.value.trim(),
      model: modelIn.value.trim(),
      provider: providerIn.value.trim(),
      status: statusIn.value,
      since: fromLocalInput(sinceIn.value),
      until: fromLocalInput(untilIn.value),
      by,
    });
  });
  clear.addEventListener('click', () => go({ by }));
  newer.addEventListener('click', () => go({ ...filters, by, offset: Math.max(0, offset - PAGE) }, requestId));
  older.addEventListener('click', () => go({ ...filters, by, offset: offset + PAGE }, requestId));
  groupSelect.addEventListener('change', () => {
    // Regrouping asks the server for the new sums; the list stays as it is, so
    // replace the address without a remount.
    const next = { ...filters, offset, by: groupSelect.value };
    history.replaceState(null, '', hashOf(next, requestId));
    loadChart();
  });
  refresh.addEventListener('click', () => {
    clearAlert(alert);
    chartCache.clear();
    loadTotals().catch(() => {});
    loadList().then(() => loadChart()).catch((err) => {
      if (!isAbort(err)) showError(alert, err);
    });
  });
  recompute.addEventListener('click', () => {
    chartCache.clear();
    loadChart();
  });

  // --- the list.
  let page = [];
  function renderRows() {
    tbody.replaceChildren();
    for (const t of page) {
      const chat = chatOf(t);
      const tokens = h('td', { class: 'num', text: num(t.total_tokens) });
      tokens.title = `${num(t.prompt_tokens)} in, ${num(t.completion_tokens)} out`;
      // Other providers tried or skipped before the one that answered (or failed last).
      const failovers = (t.route_candidates || []).filter((c) => c.provider !== t.provider && (c.outcome === 'failed' || c.outcome === 'skipped')).length;
      const link = h('a', {
        href: hashOf({ ...filters, offset, by }, t.request_id),
        class: 'mono request-id',
        title: t.request_id,
        text: t.request_id,
        'aria-current': t.request_id === requestId ? 'true' : null,
      });
      tbody.append(h('tr', { dataset: { requestId: t.request_id, status: t.status }, class: t.request_id === requestId ? 'selected' : null },
        h('td', {}, timeEl(t.started_at)),
        h('td', {}, link),
        h('td', { text: t.client_format }),
        h('td', { text: t.model || t.requested_model || '' }),
        h('td', {}, t.provider || '—', failovers ? h('span', { class: 'failover-mark', text: ` (+${failovers} ${failovers === 1 ? 'other' : 'others'})` }) : null),
        h('td', {}, statusBadge(t.status)),
        h('td', { class: 'num', text: formatDuration(t.duration_ms) }),
        tokens,
        h('td', { class: 'num', text: typeof t.cost_micros_usd === 'number' ? usd(t.cost_micros_usd) : '—' }),
        h('td', {}, chat
          ? h('a', { href: `#/chats/${encodeURIComponent(chat)}`, text: 'Open chat' })
          : t.session_id ? h('a', { href: hashOf({ session_id: t.session_id }), text: `Session ${t.session_id}`, class: 'mono' }) : '')));
    }
  }

  async function loadList() {
    // One more than a page says whether there is an older one.
    const res = await get(paths.traces, { query: { ...filters, limit: PAGE + 1, offset }, signal: ctrl.signal });
    const data = (res && res.data) || [];
    page = data.slice(0, PAGE);
    renderRows();
    older.disabled = data.length <= PAGE;
    newer.disabled = offset === 0;
    const filtered = Object.keys(filters).length > 0;
    if (page.length === 0) {
      note.textContent = offset > 0 ? 'No older traces.' : filtered ? 'No trace matches the filters.' : 'No traces yet: requests to /v1 and model turns are traced here.';
    } else {
      note.textContent = `Traces ${num(offset + 1)}–${num(offset + page.length)}, newest first${filtered ? ', filtered' : ''}.`;
    }
    return page;
  }

  // --- the inspector.
  function renderInspector(t) {
    const hid = uid('trace');
    const title = h('h2', { id: hid, text: `Trace ${requestId}` });
    inspector.setAttribute('aria-labelledby', hid);
    const close = h('a', { href: hashOf({ ...filters, offset, by }), class: 'button', text: 'Close' });
    if (!t) {
      inspector.replaceChildren(title, h('p', { text: 'No trace has this request id in this namespace.' }), close);
      return title;
    }
    inspector.dataset.status = t.status;
    const chat = chatOf(t);
    const row = (label, ...value) => [h('dt', { text: label }), h('dd', {}, ...value)];
    const facts = h('dl', { class: 'trace-facts' },
      row('Status', statusBadge(t.status)),
      t.error_type || t.error_message ? row('Error', t.error_type ? h('code', { text: t.error_type }) : null, t.error_message ? ` ${t.error_message}` : null) : null,
      row('Started', timeEl(t.started_at)),
      row('Duration', formatDuration(t.duration_ms)),
      row('Client format', h('code', { text: t.client_format })),
      row('Requested model', t.requested_model || '(the default model)'),
      row('Answered by', t.provider ? `${t.provider}/${t.model}` : 'no provider'),
      row('Route reason', t.route_reason ? `${t.route_reason} — ${ROUTE_REASON_TEXT[t.route_reason] || ''}` : 'none (the model did not resolve)'),
      row('Tokens', `${num(t.total_tokens)} (${num(t.prompt_tokens)} in, ${num(t.completion_tokens)} out)`),
      row('Cost', typeof t.cost_micros_usd === 'number' ? usd(t.cost_micros_usd) : 'unknown (no price for this model)'),
      row('Trace id', h('code', { text: t.trace_id || '—' })),
      t.session_id ? row('Session', chat
        ? h('a', { href: `#/chats/${encodeURIComponent(chat)}`, text: `Open chat ${chat}` })
        : h('code', { text: t.session_id }),
      ' · ', h('a', { href: hashOf({ session_id: t.session_id }), text: 'All traces of this session' })) : null,
      t.client_format === 'agent_loop' ? row('Task', 'A model turn of a Hecate agent task: the trace does not name the task; its model step\'s input carries this request id. ',
        h('a', { href: '#/tasks?execution_kind=agent_loop', text: 'Agent tasks' })) : null);

    const cands = t.route_candidates || [];
    const candBody = h('tbody');
    cands.forEach((c, i) => {
      const reason = c.skip_reason ? h('span', {}, h('code', { text: c.skip_reason }), REASON_TEXT[c.skip_reason] ? ` — ${REASON_TEXT[c.skip_reason]}` : '') : '';
      candBody.append(h('tr', { dataset: { outcome: c.outcome, skipReason: c.skip_reason || '' } },
        h('td', { class: 'num', text: String(i + 1) }),
        h('td', { text: c.provider }),
        h('td', { text: c.model }),
        h('td', {}, h('span', { class: `badge outcome-${c.outcome}`, text: c.outcome }), ` ${OUTCOME_TEXT[c.outcome] ? `(${OUTCOME_TEXT[c.outcome]})` : ''}`),
        h('td', {}, reason),
        h('td', { text: c.detail || '' })));
    });
    const candTable = cands.length
      ? h('table', { class: 'candidates', 'aria-label': 'Route candidates' },
        h('thead', {}, h('tr', {}, ['#', 'Provider', 'Model', 'Outcome', 'Reason', 'Detail'].map((c) => h('th', { scope: 'col', text: c })))),
        candBody)
      : h('p', { class: 'hint', text: 'No route candidate was recorded (the request failed before routing).' });
    const failedOver = cands.some((c) => c.outcome === 'failed' || c.outcome === 'skipped') && cands.some((c) => c.outcome === 'selected');
    const raw = h('details', { class: 'raw-trace', 'aria-label': 'Raw trace' },
      h('summary', { text: 'Raw trace' }),
      h('pre', { class: 'raw', text: JSON.stringify(t, null, 2) }));
    inspector.replaceChildren(
      h('div', { class: 'inspector-head' }, title, close),
      facts,
      h('h3', { text: 'Route' }),
      failedOver ? h('p', { class: 'failover-note', text: `Failed over: ${cands.filter((c) => c.outcome === 'failed' || c.outcome === 'skipped').map((c) => `${c.provider} (${c.skip_reason || c.outcome})`).join(', ')} before ${t.provider} answered.` }) : null,
      candTable,
      raw);
    return title;
  }

  async function loadInspector(fromPage) {
    inspector.replaceChildren(h('p', { class: 'hint', text: 'Loading the trace…' }));
    let t = fromPage.find((x) => x.request_id === requestId);
    if (!t) {
      const res = await get(paths.traces, { query: { request_id: requestId, limit: 1 }, signal: ctrl.signal });
      t = res && res.data && res.data[0];
    }
    return renderInspector(t || null);
  }

  // --- the cost chart.
  let chartData = null;
  function renderChart(group) {
    if (!chartData || chartData.by !== group) return;
    const groups = chartGroups(chartData.groups, group);
    const label = { day: 'day', provider: 'provider', model: 'model' }[group];
    const name = `Cost by ${label}`;
    const total = chartData.total;
    // Names: the 12 dearest, the rest as one bar (the table lists them all).
    let bars = groups.map((g) => ({ label: g.label, short: g.short, value: g.micros, display: usd(g.micros) }));
    if (group !== 'day' && bars.length > 13) {
      const rest = bars.slice(12);
      const restMicros = rest.reduce((s, b) => s + b.value, 0);
      bars = [...bars.slice(0, 12), { label: `${rest.length} others`, value: restMicros, display: usd(restMicros), other: true }];
    }
    const chart = barChart({
      bars,
      name: `${name}: ${groups.length} ${group === 'day' ? 'days' : `${label}s`}, ${usd(total.cost_micros_usd)} in all`,
      orientation: group === 'day' ? 'columns' : 'rows',
      format: usdShort,
    });
    const head = h('tr', {}, [group === 'day' ? 'Day (UTC)' : label[0].toUpperCase() + label.slice(1), 'Requests', 'Unpriced', 'Tokens', 'Cost']
      .map((c) => h('th', { scope: 'col', text: c })));
    const body = h('tbody', {}, groups.map((g) => h('tr', { dataset: { key: g.key, micros: String(g.micros) } },
      h('th', { scope: 'row', text: g.label }),
      h('td', { class: 'num', text: num(g.requests) }),
      h('td', { class: 'num', text: num(g.unpriced) }),
      h('td', { class: 'num', text: num(g.tokens) }),
      h('td', { class: 'num', text: usd(g.micros) }))));
    const foot = h('tfoot', {}, h('tr', {},
      h('th', { scope: 'row', text: 'Total' }),
      h('td', { class: 'num', text: num(total.requests) }),
      h('td', { class: 'num', text: num(total.unpriced) }),
      h('td', { class: 'num', text: num(total.tokens) }),
      h('td', { class: 'num cost-total', dataset: { micros: String(total.cost_micros_usd) }, text: usd(total.cost_micros_usd) })));
    const table = h('table', { class: 'cost-table', 'aria-label': name },
      h('caption', { text: `${name} — every trace of the filter` }),
      h('thead', {}, head), body, foot);
    chartBox.replaceChildren(
      groups.length ? h('div', { class: 'chart-scroll' }, chart) : h('p', { class: 'hint', text: 'No trace to chart.' }),
      h('details', { class: 'cost-details', open: true, 'aria-label': `${name} (table)` },
        h('summary', { text: `${name} (table)` }), h('div', { class: 'table-scroll' }, table)));
    chartNote.textContent = `${num(total.requests)} trace(s) up to ${new Date(chartData.until).toLocaleString()}.`
      + (total.unpriced ? ` ${num(total.unpriced)} without a price count as nothing.` : '');
    costSection.dataset.traces = String(total.requests);
  }

  async function loadChart() {
    const group = groupSelect.value;
    const key = JSON.stringify([filters, group]);
    // Kept for a minute across the remounts of selecting and paging.
    const cached = chartCache.get(key);
    if (cached && Date.now() - cached.at < 60000) {
      chartData = cached.data;
      renderChart(group);
      return;
    }
    chartNote.textContent = 'Summing the traces…';
    recompute.disabled = true;
    try {
      const data = await get(paths.traceCosts, { query: { ...filters, by: group }, signal: ctrl.signal });
      chartCache.set(key, { at: Date.now(), data });
      chartData = data;
      renderChart(groupSelect.value);
    } catch (err) {
      if (isAbort(err)) return;
      chartNote.textContent = '';
      showError(alert, err);
    } finally {
      recompute.disabled = false;
    }
  }

  // --- the server's totals and the filters' suggestions.
  async function loadTotals() {
    const res = await get(paths.stats, { signal: ctrl.signal });
    const g = res && res.data && res.data.gateway;
    if (!g) return;
    const item = (label, value) => h('div', {}, h('dt', { text: label }), h('dd', { text: value }));
    totals.replaceChildren(
      item('Requests', num(g.requests)),
      item('Completed', num(g.completed)),
      item('Failed', num(g.failed)),
      item('Cancelled', num(g.cancelled)),
      item('Tokens', `${num(g.prompt_tokens)} in, ${num(g.completion_tokens)} out`),
      item('Cost', usd(g.cost_micros_usd)),
      item('Since', res.data.uptime_ms ? `${formatDuration(res.data.uptime_ms)} ago (this server's start)` : 'this server started'));
  }

  async function loadSuggestions() {
    const res = await get(paths.models, { signal: ctrl.signal });
    const ids = ((res && res.data) || []).map((m) => m.id).filter(Boolean);
    const models = new Set();
    const providers = new Set();
    for (const id of ids) {
      const i = id.indexOf('/');
      if (i > 0) {
        providers.add(id.slice(0, i));
        models.add(id.slice(i + 1));
      } else {
        models.add(id);
      }
    }
    modelList.replaceChildren(...[...models].sort().map((m) => h('option', { value: m })));
    providerList.replaceChildren(...[...providers].sort().map((p) => h('option', { value: p })));
  }

  clearAlert(alert);
  loadList()
    .then(async (rows) => {
      if (requestId) {
        const title = await loadInspector(rows);
        focusEl(title);
        title.scrollIntoView({ block: 'nearest' });
      }
      loadChart();
      loadSuggestions().catch(() => {});
    })
    .catch((err) => {
      if (isAbort(err)) return;
      note.textContent = '';
      showError(alert, err);
    });
  loadTotals().catch((err) => {
    if (!isAbort(err)) totals.replaceChildren();
  });
  if (!requestId) focusEl(heading);
  return { unmount: () => ctrl.abort() };
}
