// System stats for the chrome: the pending-approval count on the nav's
// "Approvals" link and the danger banner when approvals are `auto`. Refreshed on
// navigation, on approval events and on window focus — never on a timer.

import { get, paths } from './api.js';
import { h } from './dom.js';

let navLink = null;
let banner = null;
let inflight = null;
let again = false;

export function initStats(link, bannerEl) {
  navLink = link;
  banner = bannerEl;
  window.addEventListener('focus', () => refreshStats());
}

function render(stats) {
  const n = Number(stats.pending_approvals) || 0;
  const old = navLink.querySelector('.count');
  if (old) old.remove();
  if (n > 0) navLink.append(h('span', { class: 'count', text: ` ${n}` }));
  if (stats.approval_mode === 'auto') {
    banner.replaceChildren(h('strong', { text: 'Approvals are automatic. ' }),
      'Every tool call an agent asks for is approved without asking (approval mode "auto"). Restart the server with prompting approvals to review them.');
    banner.hidden = false;
  } else {
    banner.hidden = true;
    banner.replaceChildren();
  }
}

/** Re-reads /system/stats (coalescing calls made while one is in flight). */
export function refreshStats() {
  if (!navLink) return Promise.resolve();
  if (inflight) {
    again = true;
    return inflight;
  }
  inflight = get(paths.stats)
    .then((res) => {
      if (res && res.data) render(res.data);
    })
    .catch(() => {
      /* stats are advisory: a failure leaves the last count */
    })
    .finally(() => {
      inflight = null;
      if (again) {
        again = false;
        refreshStats();
      }
    });
  return inflight;
}
