// The Agents page (#/agents): the external-agent adapters of the catalog, each
// with its installed version against the tested range, its sign-in state and —
// when it is not ready — the fix; a health check (the stage it reached, the
// error, the agent's stderr tail), a probe, and the managed install followed
// stage by stage (POST …/install, then GET …/install until it ends); the
// operator's own manifests and those that did not load; and the agent processes
// Hecate runs now (read again every few seconds), each of which can be stopped.

import { get, post, paths, isAbort } from '../api.js';
import { h, alertBox, showError, showMessage, clearAlert, timeEl, focusEl, formatDuration, uid } from '../dom.js';

const STAGES = ['resolving', 'cleaning', 'downloading', 'verifying', 'placing', 'done'];
const STAGE_TEXT = {
  resolving: 'Checking the package and npm',
  cleaning: 'Removing what an interrupted install left',
  downloading: 'npm install (downloading and unpacking)',
  verifying: 'Checking the agent’s program is there',
  placing: 'Putting the new install in place',
  done: 'Installed',
};
const POLL_MS = 250;

/** Readiness of a catalog row: {state, ready, fix}. */
export function readiness(a) {
  const installed = a.available !== false && a.status !== 'missing';
  const authOk = a.auth_status === 'ok' || a.auth_status === 'unknown';
  let state = 'ready';
  if (!installed) state = 'not_installed';
  else if (a.auth_status === 'billing') state = 'billing';
  else if (!authOk) state = 'not_signed_in';
  let fix = '';
  if (!installed) {
    fix = a.managed && a.managed_package
      ? `Install it: press Install (npm package ${a.managed_package} into Hecate's cache), or put \`${a.command}\` on PATH.`
      : `Install \`${a.command}\` and put it on PATH, then press Refresh.`;
  } else if (!authOk) {
    fix = [a.auth_error, a.auth_hint].filter(Boolean).join(' — ') || 'Sign in with the agent’s own CLI.';
  } else if (a.version_outside_range) {
    fix = `Version ${a.version} is outside the tested range ${a.supported_range}: it may work; if it misbehaves, install a tested version.`;
  }
  return { state, ready: installed && authOk, fix };
}

const STATE_TEXT = { ready: 'ready', not_installed: 'not installed', not_signed_in: 'not signed in', billing: 'billing problem' };

function about(a) {
  const rows = [
    ['Command', h('code', { text: a.command })],
    ['Installed', a.available ? `${a.version || 'unknown version'}${a.source ? ` (${a.source})` : ''}` : 'no'],
    ['Path', a.path ? h('code', { text: a.path }) : null],
    ['Tested range', a.supported_range || 'not stated'],
    ['npm package', a.managed_package ? h('code', { text: a.managed_package }) : null],
    ['Sign-in', a.auth_status + (a.auth_error ? ` — ${a.auth_error}` : '')],
    ['Manifest', a.origin === 'user' ? h('code', { text: a.manifest_path || 'your config dir' }) : 'built in'],
    ['Cost', a.cost_mode === 'external' ? 'billed by the agent’s own provider' : a.cost_mode],
  ].filter(([, v]) => v !== null && v !== undefined);
  return h('dl', { class: 'task-about', 'aria-label': `About ${a.name}` },
    rows.map(([k, v]) => [h('dt', { text: k }), h('dd', {}, v)]));
}

/** One adapter's section; `ctx` holds the page's signal and reload. */
function adapterSection(a, ctx) {
  const r = readiness(a);
  const id = uid('adapter');
  const alert = alertBox();
  const chips = h('p', { class: 'session-meta' },
    h('span', { class: `badge agent-state agent-${r.state}`, text: STATE_TEXT[r.state] }),
    a.available && a.version ? h('span', { class: 'badge', text: `v${a.version}` }) : null,
    a.supported_range ? h('span', { class: 'badge', text: `tested ${a.supported_range}` }) : null,
    a.version_outside_range ? h('span', { class: 'badge agent-warn', text: 'outside tested range' }) : null,
    h('span', { class: 'badge', text: `sign-in: ${a.auth_status}` }),
    a.origin === 'user' ? h('span', { class: 'badge', text: 'your manifest' }) : null);
  const fix = r.fix ? h('p', { class: 'agent-fix', dataset: { fix: r.state } }, h('strong', { text: 'Fix: ' }), r.fix) : null;

  const health = h('div', { role: 'status', 'aria-label': `Health of ${a.name}`, class: 'agent-health', hidden: true });
  const progress = h('ol', { class: 'agent-stages', 'aria-label': `Install progress of ${a.name}`, hidden: true });
  const installState = h('p', { role: 'status', 'aria-label': `Install of ${a.name}`, class: 'agent-install', hidden: true });

  const checkBtn = h('button', { type: 'button', text: `Check health of ${a.name}` });
  const probeBtn = h('button', { type: 'button', text: `Probe ${a.name}` });
  const installBtn = a.managed ? h('button', { type: 'button', class: a.available ? '' : 'primary', text: `${a.available ? 'Reinstall' : 'Install'} ${a.name}` }) : null;
  const refreshBtn = a.managed && a.available ? h('button', { type: 'button', text: `Refresh launcher of ${a.name}` }) : null;

  function showHealth(res) {
    health.hidden = false;
    health.dataset.status = res.status;
    health.dataset.stage = res.stage;
    health.replaceChildren(...[
      h('p', {}, h('strong', { text: res.status.replace('_', ' ') }), ` at stage ${res.stage}`,
        typeof res.duration_ms === 'number' ? ` in ${formatDuration(res.duration_ms)}` : '',
        res.agent_name ? ` — ${res.agent_name}${res.agent_version ? ' ' + res.agent_version : ''}` : ''),
      res.error ? h('p', { class: 'alert-message', text: res.error }) : null,
      res.hint ? h('p', { class: 'alert-action', text: res.hint }) : null,
      res.stderr ? h('pre', { class: 'raw-json', 'aria-label': `stderr of ${a.name}`, text: res.stderr }) : null,
    ].filter(Boolean));
  }

  async function busy(btn, work) {
    clearAlert(alert);
    btn.disabled = true;
    try {
      await work();
    } catch (err) {
      if (!isAbort(err)) showError(alert, err);
    } finally {
      btn.disabled = false;
    }
  }

  checkBtn.addEventListener('click', () => busy(checkBtn, async () => {
    health.hidden = false;
    health.dataset.status = 'checking';
    health.replaceChildren(h('p', { text: 'Checking: starting the agent, initialize, a new session…' }));
    showHealth((await get(paths.adapterHealth(a.id), { signal: ctx.signal })).data);
  }));
  probeBtn.addEventListener('click', () => busy(probeBtn, async () => {
    const res = (await post(paths.adapterProbe(a.id), {}, { signal: ctx.signal })).data;
    ctx.replace(a.id, res.adapter, res.health);
  }));
  if (refreshBtn) {
    refreshBtn.addEventListener('click', () => busy(refreshBtn, async () => {
      const res = (await post(paths.adapterRefresh(a.id), {}, { signal: ctx.signal })).data;
      ctx.replace(a.id, res);
    }));
  }

  function showJob(job) {
    progress.hidden = false;
    installState.hidden = false;
    installState.dataset.state = job.state;
    const reached = new Set(job.stages.map((s) => s.stage));
    progress.replaceChildren(...STAGES.map((s) => {
      const mark = job.stages.find((m) => m.stage === s);
      let st = 'pending';
      if (reached.has(s)) st = job.stage === s && job.state === 'running' ? 'running' : job.stage === s && job.state === 'failed' ? 'failed' : 'done';
      return h('li', { class: 'agent-stage', dataset: { stage: s, state: st } },
        h('span', { text: STAGE_TEXT[s] }), mark ? h('span', { class: 'hint', text: ` ${formatDuration(mark.elapsed_ms)}` }) : null);
    }));
    const text = job.state === 'running' ? `Installing ${a.name}: ${STAGE_TEXT[job.stage] || 'starting'}…`
      : job.state === 'succeeded' ? `Installed ${a.name}${job.adapter && job.adapter.version ? ` ${job.adapter.version}` : ''}.`
        : `The install of ${a.name} failed; nothing was changed.`;
    installState.textContent = text;
    if (job.state === 'failed' && job.error) showError(alert, { envelope: job.error });
  }

  async function follow(job) {
    showJob(job);
    while (job.state === 'running') {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      if (ctx.signal.aborted) return;
      job = (await get(paths.adapterInstall(a.id), { signal: ctx.signal })).data;
      showJob(job);
    }
    if (job.state === 'succeeded' && job.adapter) ctx.replace(a.id, job.adapter, null, job);
  }

  if (installBtn) {
    installBtn.addEventListener('click', () => busy(installBtn, async () => {
      let job;
      try {
        job = (await post(paths.adapterInstall(a.id), {}, { signal: ctx.signal })).data;
      } catch (err) {
        // One is already running (another tab, the CLI's refresh): follow it.
        if (err && err.status === 409) job = (await get(paths.adapterInstall(a.id), { signal: ctx.signal })).data;
        else throw err;
      }
      await follow(job);
    }));
  }

  const headingEl = h('h3', { id, text: a.name }, ' ', h('code', { class: 'hint', text: a.id }));
  const section = h('section', { class: 'agent-adapter', 'aria-labelledby': id, dataset: { adapterId: a.id, state: r.state } },
    headingEl, chips, fix, about(a),
    h('div', { class: 'actions' }, installBtn, refreshBtn, checkBtn, probeBtn),
    alert, installState, progress, health);
  section.showHealth = showHealth;
  section.showJob = showJob;
  section.focusTarget = headingEl;
  return section;
}

/** How often the process list is read again while the page is shown. */
const PROCESS_REFRESH_MS = 5000;

function processRow(p, onKill) {
  const name = p.session_title || p.session_id;
  const kill = h('button', { type: 'button', class: 'danger-button small', 'aria-label': `Kill the process of ${name}`, text: 'Kill' });
  kill.addEventListener('click', () => onKill(p, kill));
  const idle = p.turns > 0 ? `busy (${p.turns} turn${p.turns > 1 ? 's' : ''})`
    : typeof p.idle_ms === 'number' ? `idle ${formatDuration(p.idle_ms)}` : '';
  const limit = typeof p.idle_limit_ms === 'number' ? `stopped after ${formatDuration(p.idle_limit_ms)} idle` : 'kept for the session’s life';
  return h('tr', { dataset: { sessionId: p.session_id, pid: String(p.pid), alive: String(p.alive) } },
    h('td', {}, h('a', { href: `#/chats/${encodeURIComponent(p.session_id)}`, text: name })),
    h('td', {}, h('code', { text: p.adapter_id })),
    h('td', { class: 'agent-pid', text: String(p.pid) + (p.alive ? '' : ' (exited)') }),
    h('td', { text: idle }),
    h('td', { class: 'hint', text: limit }),
    h('td', {}, timeEl(p.started_at)),
    h('td', {}, kill));
}

export function mountAgents(root) {
  const ctrl = new AbortController();
  const heading = h('h1', { text: 'Agents' });
  const alert = alertBox();
  const refresh = h('button', { type: 'button', text: 'Refresh' });
  const note = h('p', { class: 'hint', 'aria-live': 'polite' });
  const adapters = h('div', { class: 'agent-adapters', 'aria-busy': 'true' });
  const mine = h('ul', { class: 'paths', 'aria-label': 'Your manifests' });
  const broken = h('ul', { class: 'paths', 'aria-label': 'Manifests that did not load' });
  const brokenNote = h('p', { class: 'hint' });
  const procBody = h('tbody');
  const procs = h('table', { class: 'steps', 'aria-label': 'Agent processes' },
    h('thead', {}, h('tr', {}, ['Session', 'Adapter', 'PID', 'Now', 'Idle limit', 'Started', ''].map((t) => h('th', { scope: 'col', text: t })))),
    procBody);
  const procAlert = alertBox();
  const procNote = h('p', { class: 'hint', 'aria-live': 'polite' });
  root.replaceChildren(heading, h('div', { class: 'toolbar' }, refresh), alert,
    h('h2', { text: 'Adapters' }), note, adapters,
    h('h2', { text: 'Your manifests' }), mine, h('h3', { text: 'Manifests that did not load' }), brokenNote, broken,
    h('h2', { text: 'Running agent processes' }), procAlert, procNote, h('div', { class: 'agent-procs' }, procs));

  const sections = new Map();
  const ctx = {
    signal: ctrl.signal,
    /** Replaces one adapter's section with its new row (keeping health/install shown). */
    replace(id, row, healthRes, job) {
      const old = sections.get(id);
      const next = adapterSection(row, ctx);
      sections.set(id, next);
      if (old) old.replaceWith(next);
      if (healthRes) next.showHealth(healthRes);
      if (job) next.showJob(job);
    },
  };

  async function loadAdapters() {
    const res = await get(paths.adapters, { signal: ctrl.signal });
    const list = res.data || [];
    sections.clear();
    adapters.replaceChildren(...list.map((a) => {
      const s = adapterSection(a, ctx);
      sections.set(a.id, s);
      return s;
    }));
    adapters.setAttribute('aria-busy', 'false');
    const ready = list.filter((a) => readiness(a).ready).length;
    note.textContent = list.length ? `${list.length} adapter(s), ${ready} ready.` : 'No adapter is known.';
    const own = list.filter((a) => a.origin === 'user');
    mine.replaceChildren(...own.map((a) => h('li', { dataset: { adapterId: a.id } },
      h('strong', { text: a.name }), ' ', h('code', { text: a.manifest_path || a.id }))));
    if (!own.length) mine.replaceChildren(h('li', { class: 'hint', text: 'None: add TOML manifests to the adapters folder beside the config file.' }));
    const errs = res.manifest_errors || [];
    broken.replaceChildren(...errs.map((e) => h('li', { dataset: { file: e.file } },
      h('code', { text: e.line ? `${e.file}:${e.line}` : e.file }), ` — ${e.message}`)));
    brokenNote.textContent = errs.length ? 'Read when the server started; fix the file and restart it.' : 'Every manifest loaded.';
  }

  async function killProcess(p, btn) {
    clearAlert(procAlert);
    btn.disabled = true;
    try {
      await post(paths.agentProcessKill(p.session_id), {}, { signal: ctrl.signal });
      showMessage(procAlert, `Stopped process ${p.pid} of ${p.session_title || p.session_id}.`, 'The chat stays; its next prompt starts a new process.');
      procAlert.classList.add('info');
      await loadProcesses();
    } catch (err) {
      if (!isAbort(err)) showError(procAlert, err);
      btn.disabled = false;
    }
  }

  async function loadProcesses() {
    const res = await get(paths.agentProcesses, { signal: ctrl.signal });
    procBody.replaceChildren(...res.data.map((p) => processRow(p, killProcess)));
    procNote.textContent = res.data.length ? `${res.data.length} process(es) running.` : '';
    if (!res.data.length) procBody.append(h('tr', {}, h('td', { colspan: 7, class: 'hint', text: 'No agent process is running.' })));
  }

  async function load() {
    clearAlert(alert);
    await Promise.all([
      loadAdapters().catch((err) => { if (!isAbort(err)) showError(alert, err); }),
      loadProcesses().catch((err) => { if (!isAbort(err)) showError(procAlert, err); }),
    ]);
  }

  // Processes start, idle and exit on their own: read them again on a timer,
  // except while the tab is hidden or the keyboard focus is inside the table
  // (a row replaced under a focused Kill button would lose the focus).
  let timer = null;
  function refreshProcessesLater() {
    timer = setTimeout(async () => {
      if (ctrl.signal.aborted) return;
      if (!document.hidden && !procs.contains(document.activeElement)) {
        await loadProcesses().catch((err) => { if (!isAbort(err)) showError(procAlert, err); });
      }
      if (!ctrl.signal.aborted) refreshProcessesLater();
    }, PROCESS_REFRESH_MS);
  }

  refresh.addEventListener('click', load);
  load().then(refreshProcessesLater);
  focusEl(heading);
  return {
    unmount: () => {
      clearTimeout(timer);
      ctrl.abort();
    },
  };
}
