// SPDX-License-Identifier: MIT
// main.js - the editor's entry point: the tree, the node panel, the
// messages (toasts), the dialogs, the URL (one history entry per node,
// Back/Forward, an editable fragment), the drawer and the splitter, import,
// live updates from /api/v1/events routed to the rows and the panel, who
// the token is (GET /api/v1/whoami: what the page offers), and the
// "reconnecting" state while the server does not answer.

import { api, ApiError, describeError, getToken, isReachable, onBusy, onReachable, onTokenChange, setToken, setTokenPrompt } from './api.js';
import { h, parentPath, baseName, isUnder, replaceChildren } from './dom.js';
import { EventStream } from './events.js';
import { Panel } from './panel.js';
import { Tree } from './tree.js';
import { clearSchemaCache, setDescribed } from './schema.js';
import { planList, planSummary, oldValues } from './plan.js';

const $ = (id) => document.getElementById(id);

// ---- messages: toasts near the action -----------------------------------------
//
// A message is a toast anchored under the control that caused it (the
// Delete…, Apply, Commit… button, a create form's button, the panel's
// title for a change to the node as a whole):
// absolutely positioned in that control's container, so it never pushes the
// layout down; a new message at the same place replaces the old one, and an
// error removes every success toast (a stale "Applied" never stays under a
// new error). When there is no such control (a tree row, a live update)
// the toast goes to the corner (#messages). Screen readers hear every message from two
// live regions that are always in the page (#sr-alert for errors, #sr-status
// for successes), since a live region inserted with its text is not
// reliably announced.

const messages = $('messages');
const srAlert = $('sr-alert');
const srStatus = $('sr-status');
const MAX_MESSAGES = 4;
const OK_MS = 6000;
let lastActor = null;

// the control a message belongs to, when the caller does not say: the last
// one clicked or submitted outside a dialog and outside the messages
document.addEventListener('click', (e) => noteActor(e.target), true);
document.addEventListener('submit', (e) => noteActor(e.submitter || e.target), true);
function noteActor(t) {
  const el = t instanceof Element ? t.closest('button, input, select, textarea, [role="treeitem"], form') : null;
  if (el && !el.closest('dialog, .msg')) lastActor = el;
}

function anchorFor(opts) {
  if (opts.corner) return null;
  const given = opts.anchor;
  if (given instanceof Element && given.isConnected && given.getClientRects().length) return given;
  for (let a of [document.activeElement, lastActor]) {
    if (!(a instanceof Element) || !a.isConnected || a === document.body || a.closest('dialog, .msg, .notices, [role="tree"]')) continue;
    // a field's message goes under its form's button, a form's too
    if (a.matches('input, select, textarea, form')) a = (a.form || a).querySelector('button[type="submit"], button.primary') || a.closest('label') || a;
    if (a.isConnected && a.getClientRects().length && !a.matches('input, select, textarea')) return a;
  }
  return null;
}

function announce(region, text) {
  // a change of text is what a live region announces: clear, then set
  region.textContent = '';
  requestAnimationFrame(() => {
    region.textContent = text;
  });
}

function dismiss(msg) {
  clearTimeout(msg._timer);
  const back = msg._anchor;
  const hadFocus = msg.contains(document.activeElement);
  msg.remove();
  if (hadFocus && back && back.isConnected) back.focus();
}

/** Put @msg under @anchor (or in the corner without one). */
function place(msg, anchor) {
  if (anchor) {
    // the control went out of sight (a field error above it grew the form):
    // bring it back, as little as needed, so its message is seen there
    const scroller = anchor.closest('.panel-scroll, .tree-scroll');
    const v = scroller ? scroller.getBoundingClientRect() : { top: 0, bottom: window.innerHeight };
    const a = anchor.getBoundingClientRect();
    if (a.top < v.top || a.bottom > v.bottom) anchor.scrollIntoView({ block: 'nearest' });
  }
  if (!anchor) {
    msg.classList.remove('anchored');
    messages.prepend(msg);
    while (messages.children.length > MAX_MESSAGES) messages.lastElementChild.remove();
    return;
  }
  // one message per control: the new one replaces the old
  for (const old of document.querySelectorAll('.msg.anchored')) if (old._anchor === anchor) dismiss(old);
  const host = anchor.parentElement;
  host.classList.add('toast-host');
  msg.classList.add('anchored');
  msg._anchor = anchor;
  msg.dataset.anchor = anchor.textContent.trim().slice(0, 40) || anchor.getAttribute('aria-label') || anchor.tagName.toLowerCase();
  anchor.after(msg);
  const room = host.clientWidth - msg.offsetWidth;
  const left = Math.max(0, Math.min(anchor.offsetLeft, room));
  msg.style.left = `${left}px`;
  // inside the window: a toast under a header button at the right edge is
  // moved left until it fits (never cut at the edge)
  const edge = 8;
  let r = msg.getBoundingClientRect();
  let shift = 0;
  if (r.right > window.innerWidth - edge) shift = window.innerWidth - edge - r.right;
  if (r.left + shift < edge) shift = edge - r.left;
  msg.style.left = `${left + shift}px`;
  let top = anchor.offsetTop + anchor.offsetHeight + 4;
  msg.style.top = `${top}px`;
  // under the control; never over an action bar other than the control's
  // own (it goes below that bar); when there is no room below, the panel
  // scrolls to make some, and only then does it go over the control
  const scroller = host.closest('.panel-scroll, .tree-scroll');
  const view = () => (scroller ? scroller.getBoundingClientRect() : { top: 0, bottom: window.innerHeight });
  const own = anchor.closest('.toolbar, .bar');
  const bars = scroller ? [...scroller.querySelectorAll('.toolbar')].filter((b) => b !== own && !msg.contains(b)) : [];
  for (let i = 0; i < 4; i++) {
    r = msg.getBoundingClientRect();
    const hit = bars.map((b) => b.getBoundingClientRect()).find((b) => b.height && b.bottom > r.top && b.top < r.bottom && b.right > r.left && b.left < r.right);
    if (!hit) break;
    top += hit.bottom - r.top + 4;
    msg.style.top = `${top}px`;
  }
  r = msg.getBoundingClientRect();
  let v = view();
  const bottom = Math.min(v.bottom, window.innerHeight);
  if (r.bottom > bottom && scroller && scroller.scrollHeight - scroller.clientHeight - scroller.scrollTop >= r.bottom - bottom) {
    scroller.scrollTop += r.bottom - bottom + 4;
    r = msg.getBoundingClientRect();
    v = view();
  }
  const a = anchor.getBoundingClientRect();
  if (r.bottom > Math.min(v.bottom, window.innerHeight) && a.top - r.height - 4 >= Math.max(v.top, 0)) {
    msg.style.top = `${anchor.offsetTop - msg.offsetHeight - 4}px`;
    msg.classList.add('above');
  }
}

function clearOk() {
  for (const m of document.querySelectorAll('.msg.ok')) dismiss(m);
}

/** Show an error as a toast under the control that caused it (or
 * @opts.anchor): title, status, errno, detail, @opts.lead, what blocks a
 * refused rmdir (links as jump links, depend_item references as a count),
 * @opts.actions as buttons, @opts.body more nodes. */
function showError(e, opts = {}) {
  if (e && e.name === 'AbortError') return;
  const d = describeError(e);
  const anchor = anchorFor(opts);
  clearOk(); // a success from before this error is stale now
  const actions = (opts.actions || []).map((a) =>
    h('button', { type: 'button', onclick: async (ev) => {
      dismiss(ev.currentTarget.closest('.msg'));
      try {
        await a.run();
      } catch (x) {
        showError(x, { anchor });
      }
    } }, a.label),
  );
  const p = e instanceof ApiError ? e.problem : {};
  // what blocks a refused rmdir, as jump links (the problem's blockers)
  const blockers = Array.isArray(p.blockers) && p.blockers.length
    ? h('ul', { class: 'blockers', 'aria-label': e.errno === 'EBUSY' ? 'Held by these links' : 'It holds' },
      p.blockers.map((b) => h('li', {}, h('button', { type: 'button', class: 'linkish', title: b, onclick: () => navigate(b) }, b))))
    : null;
  const deps = Number.isInteger(p.dependents) && p.dependents > 0
    ? h('p', { class: 'msg-depends' }, `Held by ${p.dependents} depend_item reference${p.dependents === 1 ? '' : 's'}: another part of the server uses this item (configfs does not say which). It can be deleted once that user lets go of it.`)
    : null;
  const msg = h(
    'div',
    { class: 'msg error', role: 'group', 'aria-label': 'Error', dataset: { status: String(d.status), errno: d.errno } },
    h('p', { class: 'msg-head' }, opts.lead ? h('strong', {}, opts.lead) : null, opts.lead ? ' ' : null, h('span', { class: 'msg-title' }, d.head)),
    d.detail ? h('p', { class: 'msg-detail' }, d.detail) : null,
    blockers ? h('p', { class: 'msg-blockers' }, e.errno === 'EBUSY' ? 'Linked from:' : 'It holds:') : null,
    blockers,
    deps,
    opts.body || null,
    h('div', { class: 'msg-actions' }, actions, h('button', { type: 'button', class: 'quiet dismiss', onclick: (ev) => dismiss(ev.currentTarget.closest('.msg')) }, 'Dismiss')),
  );
  place(msg, anchor);
  announce(srAlert, [opts.lead, d.head, d.detail, deps && deps.textContent].filter(Boolean).join(' '));
}

/** Show a success as a toast under the control that caused it (or
 * @opts.anchor); it goes by itself after a few seconds. */
function showOk(text, opts = {}) {
  const anchor = anchorFor(opts);
  clearOk();
  const msg = h('div', { class: 'msg ok', role: 'group', 'aria-label': 'Done' },
    h('p', { class: 'msg-text' }, text),
    h('button', { type: 'button', class: 'quiet small dismiss', 'aria-label': 'Dismiss', onclick: (ev) => dismiss(ev.currentTarget.closest('.msg')) }, '×'));
  place(msg, anchor);
  msg._timer = setTimeout(() => {
    if (!msg.contains(document.activeElement)) msg.remove();
  }, OK_MS);
  announce(srStatus, text);
}

function clearErrors() {
  for (const m of document.querySelectorAll('.msg.error')) dismiss(m);
}

const notify = { error: showError, ok: showOk, clear: clearErrors };

document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && !document.querySelector('dialog[open]')) {
    if (document.body.classList.contains('drawer-open')) setDrawer(false);
  }
});

// ---- dialogs ------------------------------------------------------------------

/**
 * Ask @text; resolves true for OK. @opts: body (nodes under the text),
 * okClass ('danger' by default, 'primary'), title, setup(okButton) called
 * once the dialog shows (to enable or disable OK).
 */
function confirmDialog(text, okLabel, opts = {}) {
  const dlg = $('dlg-confirm');
  $('confirm-h').textContent = opts.title || 'Are you sure?';
  $('confirm-text').textContent = text;
  replaceChildren($('confirm-body'), opts.body || null);
  const ok = $('confirm-ok');
  ok.textContent = okLabel;
  ok.className = opts.okClass || 'danger';
  ok.disabled = false;
  const opener = document.activeElement;
  dlg.returnValue = '';
  dlg.showModal();
  $('confirm-cancel').focus();
  if (opts.setup) opts.setup(ok);
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => {
      if (opener && opener.isConnected) opener.focus();
      resolve(dlg.returnValue === 'ok');
    }, { once: true });
  });
}

function tokenDialog(reason) {
  const dlg = $('dlg-token');
  const input = $('token-input');
  $('token-reason').textContent = reason;
  input.value = '';
  dlg.returnValue = '';
  const opener = document.activeElement;
  dlg.showModal();
  input.focus();
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => {
      if (opener && opener.isConnected) opener.focus();
      if (dlg.returnValue === 'ok' && input.value.trim()) {
        setToken(input.value.trim());
        updateTokenButton();
        resolve(getToken());
      } else {
        resolve(null);
      }
    }, { once: true });
  });
}

setTokenPrompt(() => tokenDialog(getToken() ? 'The server refused the token (401). Give another one.' : 'The server asks for a bearer token (401).'));

function updateTokenButton() {
  $('btn-forget').hidden = !getToken();
}

// ---- the drawer (narrow windows) and the splitter ------------------------------

const narrow = window.matchMedia('(max-width: 760px)');

function setDrawer(open) {
  document.body.classList.toggle('drawer-open', open);
  $('btn-drawer').setAttribute('aria-expanded', String(open));
  if (open && tree.focused) tree.focused.li.focus();
}
$('btn-drawer').addEventListener('click', () => setDrawer(!document.body.classList.contains('drawer-open')));

const splitter = $('splitter');
const layout = $('layout');
function setTreeWidth(pct) {
  const p = Math.max(12, Math.min(70, Math.round(pct)));
  document.documentElement.style.setProperty('--tree-w', `${p}%`);
  splitter.setAttribute('aria-valuenow', String(p));
  try {
    localStorage.setItem('configfsd.treeWidth', String(p));
  } catch {
    /* no storage: the width lasts as long as the page */
  }
}
{
  let saved = null;
  try {
    saved = Number(localStorage.getItem('configfsd.treeWidth'));
  } catch {
    saved = null;
  }
  if (saved) setTreeWidth(saved);
}
splitter.addEventListener('keydown', (e) => {
  const now = Number(splitter.getAttribute('aria-valuenow'));
  const step = { ArrowLeft: -2, ArrowRight: 2, Home: -100, End: 100 }[e.key];
  if (step === undefined) return;
  e.preventDefault();
  setTreeWidth(now + step);
});
splitter.addEventListener('pointerdown', (e) => {
  splitter.setPointerCapture(e.pointerId);
  splitter.classList.add('dragging');
  const move = (ev) => {
    const r = layout.getBoundingClientRect();
    setTreeWidth(((ev.clientX - r.left) / r.width) * 100);
  };
  const up = () => {
    splitter.classList.remove('dragging');
    splitter.removeEventListener('pointermove', move);
    splitter.removeEventListener('pointerup', up);
  };
  splitter.addEventListener('pointermove', move);
  splitter.addEventListener('pointerup', up);
});

// ---- the tree, the panel and the URL -------------------------------------------

const treeEl = $('tree');
let panel;
let panelLoad = Promise.resolve();

/** The fragment of @path: '#/fakenbd/live/disk1'. */
const hashOf = (path) => `#${encodeURI(path)}`;
const pathOfHash = () => {
  try {
    return decodeURI(location.hash.slice(1)) || '/';
  } catch {
    return '/';
  }
};

/** Show @path in the panel; @push adds a history entry for it. */
function showNode(path, { push = true } = {}) {
  panelLoad = panel.show(path).catch(showError);
  if (location.hash !== hashOf(path)) {
    if (push) history.pushState({ path }, '', hashOf(path));
    else history.replaceState({ path }, '', hashOf(path));
  }
  document.title = `${baseName(path)} — ${path} — configfsd`;
  if (narrow.matches) setDrawer(false);
  return panelLoad;
}

/** May the panel leave its node for @path? Asks when edits are staged. */
async function canLeave(path) {
  if (!panel || !panel.staged() || path === panel.path) return true;
  const n = panel.staged();
  return confirmDialog(`${panel.path} has ${n} staged change${n === 1 ? '' : 's'} that ${n === 1 ? 'is' : 'are'} not applied. Leave and discard ${n === 1 ? 'it' : 'them'}?`, 'Discard and leave', { title: 'Discard staged changes?' });
}

const tree = new Tree(treeEl, {
  onSelect: (path) => showNode(path),
  onFollow: (target) => navigate(target, { focusPanel: false }),
  onError: showError,
  canLeave,
});

/** Show @path: open the tree down to it, select it; then focus the
 * panel's heading unless @focusPanel is false (the tree keeps focus).
 * @push false: the history entry is there already (Back/Forward). */
async function navigate(path, { focusPanel = true, push = true, ask = true } = {}) {
  if (ask && !(await canLeave(path))) return false;
  if (path === '/' || !path) {
    panel.welcome();
    document.title = 'configfsd';
    if (location.hash !== '#/' && location.hash !== '') {
      if (push) history.pushState({ path: '/' }, '', '#/');
      else history.replaceState({ path: '/' }, '', '#/');
    }
    return true;
  }
  const ok = await tree.reveal(path, { focus: !focusPanel }).catch((e) => {
    showError(e);
    return false;
  });
  if (!ok) {
    if (!sees(path)) {
      showError(new ApiError(403, { title: 'Forbidden', status: 403, errno: 'EACCES', detail: `${path} is outside your token\u2019s scope (${me.subtrees.join(', ')})` }));
    } else {
      showError(new ApiError(404, { title: 'Not Found', status: 404, detail: `${path} is not in the tree`, errno: 'ENOENT' }));
    }
    return false;
  }
  await showNode(path, { push });
  if (focusPanel) panel.focusTitle();
  return true;
}

panel = new Panel($('panel'), { tree, notify, confirm: confirmDialog, navigate, subsystems: () => subsystemsInfo, denyWrite, online: isReachable });

// Back, Forward and an edited fragment. An edited fragment fires both
// popstate and hashchange: the second finds the first under way and
// leaves it (two loads of the panel would replace it under the user).
let following = null;
async function followUrl() {
  const want = pathOfHash();
  if (want === (panel.path || '/') || want === following) return;
  following = want;
  try {
    const from = panel.path || '/';
    if (!(await canLeave(want))) {
      history.pushState({ path: from }, '', hashOf(from));
      return;
    }
    await navigate(want, { push: false, ask: false, focusPanel: false });
  } finally {
    if (following === want) following = null;
  }
}
window.addEventListener('popstate', followUrl);
window.addEventListener('hashchange', followUrl);

window.addEventListener('beforeunload', (e) => {
  if (panel.staged()) {
    e.preventDefault();
    e.returnValue = '';
  }
});

// the filter over the tree
{
  const input = $('tree-filter');
  const hint = $('tree-filter-hint');
  let timer = null;
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const want = input.value;
      const r = await tree.setFilter(want).catch((e) => {
        showError(e);
        return null;
      });
      if (input.value !== want) return;
      hint.textContent = r ? `${r.matches.toLocaleString('en')} name${r.matches === 1 ? '' : 's'} in the open groups hold “${want.trim()}”` : '';
      document.body.dataset.filter = want;
    }, 150);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && input.value) {
      input.value = '';
      input.dispatchEvent(new Event('input'));
    } else if (e.key === 'ArrowDown') {
      e.preventDefault();
      const first = treeEl.querySelector('[role=treeitem]');
      if (first) tree.moveTo(tree.entryOf(first));
    }
  });
}

// the path bar: type a path (or paste one) and jump there
$('goto').addEventListener('submit', async (e) => {
  e.preventDefault();
  const input = $('goto-path');
  let want = input.value.trim().replace(/\/+$/, '');
  if (want === '') return;
  if (!want.startsWith('/')) want = `/${want}`;
  if (await navigate(want)) input.value = '';
});

// ---- who am I: what the token may do ------------------------------------------
//
// GET /api/v1/whoami names the token, its role and its subtrees. The page
// offers only what the token may do: a reader browses, watches and reads
// history; a writer changes the tree inside its subtrees; only an admin
// exports and imports. The server stays the judge (a 403 is still shown,
// as "outside your token's scope" or the role it needs).

let me = null; // the answer of /api/v1/whoami, or null: not known (all offered)

/** @path is one of @subtree or below it, segment by segment. */
const within = (path, subtree) => subtree === '/' || path === subtree || path.startsWith(`${subtree}/`);
/** The token may use @path (it is inside one of its subtrees). */
const covers = (path) => !me || me.subtrees.some((s) => within(path, s));
/** The token sees @path: inside, or on the way to one of its subtrees. */
const sees = (path) => covers(path) || me.subtrees.some((s) => within(s, path));

/** Why the token may not change @path (a sentence), or null when it may. */
function denyWrite(path) {
  if (!me) return null;
  const who = me.name ? `Your token (${me.name})` : 'This session';
  if (me.role === 'reader') return `${who} is a reader: it can browse, watch and view history, not change the tree.`;
  if (!covers(path)) return `Outside your token\u2019s scope: ${who.replace('Your token', 'it')} may change only ${me.subtrees.join(', ')}.`;
  return null;
}

function showWhoami() {
  const el = $('whoami');
  const admin = !me || me.role === 'admin';
  // export carries write-only values and import replaces the tree: admin only
  for (const id of ['btn-export', 'btn-import']) $(id).hidden = !admin;
  if (!me) {
    el.textContent = '';
    el.dataset.role = '';
    return;
  }
  el.dataset.role = me.role;
  const where = me.whole_tree ? 'the whole tree' : me.subtrees.join(', ');
  if (!me.tokens) {
    replaceChildren(el, 'No token needed (loopback): ', h('strong', {}, 'admin'), ', the whole tree');
    el.title = 'The server runs without --tokens: it listens on loopback only and trusts every request.';
    return;
  }
  replaceChildren(el, h('strong', {}, me.name), ` \u00b7 ${me.role} \u00b7 ${where}`);
  el.title = `Signed in with the token ${me.name}: role ${me.role}, ${where}.${admin ? '' : ' Export and Import need the admin role.'}`;
}

async function loadWhoami() {
  try {
    me = (await api.whoami()).data;
  } catch (e) {
    me = null;
    if (!(e instanceof ApiError && e.status === 404)) throw e;
  }
  showWhoami();
}

// ---- reconnecting: the server does not answer -----------------------------------
//
// A request that gets no answer (the server stopped, the network is down)
// puts the page in this state: the header says so, Apply is disabled (the
// staged values stay), and /healthz is asked, less and less often, until
// the server answers; then the state goes and Apply comes back.

const net = $('net');
let probeTimer = null;

function probe(delay) {
  clearTimeout(probeTimer);
  probeTimer = setTimeout(async () => {
    try {
      await api.health();
    } catch {
      if (!isReachable()) probe(Math.min(delay * 2, 5000));
    }
  }, delay);
}

onReachable((up) => {
  document.body.dataset.offline = String(!up);
  net.hidden = up;
  net.textContent = up ? '' : 'The server does not answer: reconnecting\u2026 (Apply waits; staged changes are kept)';
  if (up) {
    clearTimeout(probeTimer);
    showOk('The server answers again.', { corner: true });
  } else {
    probe(250);
  }
  panel.reachabilityChanged();
});

// ---- progress: anything that takes over 300 ms says so ---------------------------

{
  const busyEl = $('busy');
  let timer = null;
  onBusy((n) => {
    if (n > 0 && !timer && busyEl.hidden) {
      timer = setTimeout(() => {
        timer = null;
        busyEl.hidden = false;
        document.body.dataset.busy = 'true';
      }, 300);
    } else if (n === 0) {
      clearTimeout(timer);
      timer = null;
      busyEl.hidden = true;
      document.body.dataset.busy = 'false';
    }
  });
}

// ---- live updates -------------------------------------------------------------

const conn = $('conn');
const revEl = $('revision');
let revision = 0;
let subsystemsInfo = { subsystems: [], described: [] };

function setRevision(n) {
  revision = n;
  revEl.textContent = `revision ${n}`;
}

const pendingDirs = new Set();
const summaryDirs = new Set(); // groups whose rows' summaries changed
let panelStructure = false;
const panelStores = new Map(); // attribute name -> revision

/** Work out what an event touches; apply once its revision is complete. */
function onEvent(type, d) {
  if (type === 'reset') {
    showOk('The server\u2019s history moved past this page: reloading the tree.');
    reloadAll();
    return;
  }
  const shown = panel.path;
  const touch = (dir) => pendingDirs.add(dir);
  switch (d.op) {
    case 'mkdir':
    case 'rmdir':
    case 'symlink':
    case 'unlink':
      touch(parentPath(d.path));
      // a link is in its item's summary ({@links})
      if (d.op === 'symlink' || d.op === 'unlink') summaryDirs.add(parentPath(parentPath(d.path)));
      if (shown && parentPath(d.path) === shown) panelStructure = true;
      if (shown && d.op === 'rmdir' && isUnder(shown, d.path)) {
        showOk(`${shown} was deleted on the server.`);
        panel.discard();
        setTimeout(() => navigate(parentPath(d.path), { push: false, ask: false }), 0);
      }
      break;
    case 'store':
      // a value changes no listing, only the summary of its item's row
      // and the panel showing the item
      summaryDirs.add(parentPath(parentPath(d.path)));
      if (shown && parentPath(d.path) === shown) panelStores.set(d.path.slice(shown.length + 1), d.revision);
      break;
    case 'rename':
      touch(parentPath(d.from));
      touch(parentPath(d.to));
      if (shown && isUnder(shown, d.from)) {
        const moved = d.to + shown.slice(d.from.length);
        setTimeout(() => navigate(moved, { push: false, ask: false }), 0);
      }
      break;
    default:
      break;
  }
  if (d.revision > revision) setRevision(d.revision);
  if (d.index === undefined || d.index + 1 >= d.count) flush();
}

let flushing = Promise.resolve();
function flush() {
  const dirs = [...pendingDirs];
  pendingDirs.clear();
  const sums = [...summaryDirs];
  summaryDirs.clear();
  const stores = [...panelStores];
  panelStores.clear();
  const structure = panelStructure;
  panelStructure = false;
  const rev = revision;
  flushing = flushing.then(async () => {
    for (const dir of dirs) await tree.changed(dir);
    for (const dir of sums) await tree.resummarize(dir).catch(() => {});
    for (const [name, r] of stores) await panel.attributeChanged(name, r);
    if (structure) await panel.structureChanged();
    document.body.dataset.revision = String(rev);
  }).catch(showError);
}

const stream = new EventStream({
  onEvent,
  onState: (state, text) => {
    conn.textContent = `Live updates: ${text}`;
    conn.className = `conn conn-${state}`;
    conn.dataset.state = state;
  },
});

// a new token may let the stream in where it was refused
onTokenChange(() => stream.reconnect());

async function reloadAll() {
  stream.stop();
  clearSchemaCache();
  try {
    const info = await api.info();
    await loadWhoami();
    subsystemsInfo = info.data;
    setDescribed(info.data.described);
    setRevision(info.data.revision);
    await tree.load();
    stream.start(info.data.revision);
    if (panel.path) await panel.reload();
    else await panel.welcome();
    document.body.dataset.revision = String(revision);
    document.body.dataset.ready = 'true';
  } catch (e) {
    showError(e);
    conn.textContent = 'Live updates: off (the tree could not be loaded)';
  }
}

// ---- toolbar ------------------------------------------------------------------

$('btn-reload').addEventListener('click', () => reloadAll());
$('btn-token').addEventListener('click', async () => {
  const t = await tokenDialog('A bearer token from the server\u2019s tokens file; kept in this tab only (sessionStorage).');
  if (t) reloadAll();
});
$('btn-forget').addEventListener('click', () => {
  setToken('');
  updateTokenButton();
  showOk('The token is forgotten.');
  stream.reconnect();
});
// The whole tree as a file the browser downloads; its revision.
async function downloadExport() {
  const r = await api.exportTree();
  const blob = new Blob([`${JSON.stringify(r.data, null, 2)}\n`], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: `configfsd-export-r${r.data.revision}.json`, class: 'hidden' });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
  return r.data.revision;
}
$('btn-export').addEventListener('click', async () => {
  try {
    showOk(`Exported revision ${await downloadExport()}.`);
  } catch (e) {
    showError(e);
  }
});

// import: the server's dry run first, as a diff; then the same plan for real
$('btn-import').addEventListener('click', () => $('import-file').click());
$('import-file').addEventListener('change', async (ev) => {
  const file = ev.target.files[0];
  ev.target.value = '';
  if (!file) return;
  let doc;
  try {
    doc = JSON.parse(await file.text());
  } catch (e) {
    showError(new ApiError(0, { title: 'Not an export file', status: 0, detail: `${file.name}: ${e.message}` }));
    return;
  }
  await importPreview(doc, file.name);
});

// @initialMode: the mode chosen before ("Preview again" keeps it).
async function importPreview(doc, fileName, initialMode = 'merge') {
  const mode = h('select', { id: 'import-mode' },
    h('option', { value: 'merge' }, 'merge: add and change, remove nothing'),
    h('option', { value: 'replace' }, 'replace: also remove what the file lacks'));
  mode.value = initialMode;
  const summary = h('p', { class: 'plan-summary', 'aria-live': 'polite' });
  const progress = h('progress', { id: 'import-progress', class: 'hidden', 'aria-label': 'Planning the import' });
  const planBox = h('div', { class: 'plan-box' });
  const backupNote = h('span', { class: 'muted', 'aria-live': 'polite' });
  const backup = h('p', { id: 'import-backup', class: 'hidden' },
    'Replace removes what the file lacks. ',
    h('button', {
      type: 'button',
      id: 'btn-import-backup',
      onclick: async () => {
        backupNote.textContent = ' Exporting…';
        try {
          backupNote.textContent = ` Backup of revision ${await downloadExport()} downloaded.`;
        } catch (e) {
          backupNote.textContent = ` The backup failed: ${describeError(e).detail || describeError(e).head}`;
        }
      },
    }, 'Download a backup first'),
    backupNote);
  let plan = null;
  let okBtn = null;
  let asked = 0; // the newest dry run: an older answer is dropped
  const dry = async () => {
    const mine = ++asked;
    const t0 = Date.now();
    plan = null;
    backup.classList.toggle('hidden', mode.value !== 'replace');
    summary.textContent = 'Asking the server for its plan…';
    progress.classList.remove('hidden');
    const tick = setInterval(() => {
      summary.textContent = `Asking the server for its plan… ${Math.round((Date.now() - t0) / 1000)} s`;
    }, 1000);
    replaceChildren(planBox);
    if (okBtn) okBtn.disabled = true;
    try {
      const r = await api.importTree(doc, mode.value, true);
      const old = await oldValues(r.data.ops);
      if (mine !== asked) return;
      plan = r.data;
      summary.textContent = `At revision ${plan.revision}: ${planSummary(plan.ops)}.`;
      replaceChildren(planBox, plan.ops.length ? planList(plan.ops, { old }) : h('p', { class: 'muted' }, 'The tree already matches the file.'));
      if (okBtn) okBtn.disabled = !plan.ops.length;
    } catch (e) {
      if (mine !== asked) return;
      summary.textContent = `The server refused the file: ${describeError(e).detail || describeError(e).head}`;
    } finally {
      clearInterval(tick);
      if (mine === asked) progress.classList.add('hidden');
    }
  };
  mode.addEventListener('change', dry);
  const body = h('div', { class: 'import-preview' }, h('label', { for: 'import-mode' }, 'Mode'), ' ', mode, backup, summary, progress, planBox);
  const go = confirmDialog(`The server's plan for ${fileName} (a dry run: nothing has changed yet). Apply runs it as one change, only if the tree is still at the revision shown.`, 'Apply import', {
    title: 'Import',
    body,
    okClass: 'primary',
    setup: (b) => {
      okBtn = b;
      b.disabled = true;
    },
  });
  await dry();
  if (!(await go) || !plan) return;
  const chosen = mode.value;
  try {
    const r = await api.importTree(doc, chosen, false, plan.revision);
    showOk(r.data.changed ? `Imported ${fileName}: revision ${r.data.revision}, ${planSummary(r.data.ops)}.` : `Imported ${fileName}: nothing changed.`);
  } catch (e) {
    showError(e, e instanceof ApiError && e.status === 412 ? { lead: 'The tree changed since the preview; nothing was imported.', actions: [{ label: 'Preview again', run: () => importPreview(doc, fileName, chosen) }] } : {});
  }
}

// A failure nothing else caught is still shown, under the control that
// caused it: the page never fails silently.
window.addEventListener('unhandledrejection', (e) => {
  e.preventDefault();
  showError(e.reason instanceof Error ? e.reason : new Error(String(e.reason)));
});

updateTokenButton();
reloadAll().then(() => {
  const want = pathOfHash();
  history.replaceState({ path: want }, '', location.hash || '#/');
  if (want.startsWith('/') && want !== '/') navigate(want, { push: false });
});
