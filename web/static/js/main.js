// SPDX-License-Identifier: MIT
// main.js - the editor's entry point: the tree, the node panel, the
// message area, the token and confirm dialogs, and live updates from
// /api/v1/events routed to the tree rows and the panel they touch.

import { api, ApiError, describeError, getToken, onTokenChange, setToken, setTokenPrompt } from './api.js';
import { h, parentPath, isUnder, replaceChildren } from './dom.js';
import { EventStream } from './events.js';
import { Panel } from './panel.js';
import { Tree } from './tree.js';
import { clearSchemaCache, setDescribed } from './schema.js';

const $ = (id) => document.getElementById(id);

// ---- messages ---------------------------------------------------------------

const messages = $('messages');
const status = $('status');
const MAX_MESSAGES = 4;

/** Show an error in the alert area: title, status, errno and detail. */
function showError(e, opts = {}) {
  if (e && e.name === 'AbortError') return;
  const d = describeError(e);
  const actions = (opts.actions || []).map((a) =>
    h('button', { type: 'button', onclick: async (ev) => {
      ev.currentTarget.closest('.msg').remove();
      try {
        await a.run();
      } catch (x) {
        showError(x);
      }
    } }, a.label),
  );
  const msg = h(
    'div',
    { class: 'msg error', dataset: { status: String(d.status), errno: d.errno } },
    h('p', { class: 'msg-head' }, opts.lead ? h('strong', {}, opts.lead) : null, opts.lead ? ' ' : null, h('span', { class: 'msg-title' }, d.head)),
    d.detail ? h('p', { class: 'msg-detail' }, d.detail) : null,
    h('div', { class: 'msg-actions' }, actions, h('button', { type: 'button', class: 'quiet', onclick: (ev) => ev.currentTarget.closest('.msg').remove() }, 'Dismiss')),
  );
  messages.prepend(msg);
  while (messages.children.length > MAX_MESSAGES) messages.lastElementChild.remove();
}

let statusTimer = null;
function showOk(text) {
  status.textContent = text;
  clearTimeout(statusTimer);
  statusTimer = setTimeout(() => {
    status.textContent = '';
  }, 8000);
}

const notify = { error: showError, ok: showOk };

// ---- dialogs ------------------------------------------------------------------

function confirmDialog(text, okLabel) {
  const dlg = $('dlg-confirm');
  $('confirm-text').textContent = text;
  $('confirm-ok').textContent = okLabel;
  const opener = document.activeElement;
  dlg.returnValue = '';
  dlg.showModal();
  $('confirm-cancel').focus();
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

// ---- the tree and the panel ---------------------------------------------------

const treeEl = $('tree');
let panel;
let panelLoad = Promise.resolve();
const tree = new Tree(treeEl, {
  onSelect: (path) => {
    panelLoad = panel.show(path).catch(showError);
    if (location.hash !== `#${path}`) history.replaceState(null, '', `#${encodeURI(path)}`);
  },
  onFollow: (target) => navigate(target, { focusPanel: false }),
  onError: showError,
});

/** Show @path: open the tree down to it, select it; then focus the
 * panel's heading unless @focusPanel is false (the tree keeps focus). */
async function navigate(path, { focusPanel = true } = {}) {
  if (path === '/' || !path) {
    panel.welcome();
    return;
  }
  const ok = await tree.reveal(path, { focus: !focusPanel }).catch((e) => {
    showError(e);
    return false;
  });
  if (!ok) {
    showError(new ApiError(404, { title: 'Not Found', status: 404, detail: `${path} is not in the tree`, errno: 'ENOENT' }));
  } else if (focusPanel) {
    await panelLoad;
    panel.focusTitle();
  }
}

panel = new Panel($('panel'), { tree, notify, confirm: confirmDialog, navigate });

// ---- live updates -------------------------------------------------------------

const conn = $('conn');
const revEl = $('revision');
let revision = 0;

function setRevision(n) {
  revision = n;
  revEl.textContent = `revision ${n}`;
}

const pendingDirs = new Set();
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
      if (shown && parentPath(d.path) === shown) panelStructure = true;
      if (shown && d.op === 'rmdir' && isUnder(shown, d.path)) {
        showOk(`${shown} was deleted on the server.`);
        setTimeout(() => navigate(parentPath(d.path)), 0);
      }
      break;
    case 'store':
      // a value changes no listing: only the panel showing its item cares
      if (shown && parentPath(d.path) === shown) panelStores.set(d.path.slice(shown.length + 1), d.revision);
      break;
    case 'rename':
      touch(parentPath(d.from));
      touch(parentPath(d.to));
      if (shown && isUnder(shown, d.from)) {
        const moved = d.to + shown.slice(d.from.length);
        setTimeout(() => navigate(moved), 0);
      }
      break;
    default:
      break;
  }
  if (d.revision > revision) setRevision(d.revision);
  if (d.index === undefined || d.index + 1 >= d.count) flush();
}

async function flush() {
  const dirs = [...pendingDirs];
  pendingDirs.clear();
  const stores = [...panelStores];
  panelStores.clear();
  const structure = panelStructure;
  panelStructure = false;
  for (const dir of dirs) await tree.changed(dir);
  for (const [name, rev] of stores) await panel.attributeChanged(name, rev);
  if (structure) await panel.structureChanged();
  document.body.dataset.revision = String(revision);
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
    setDescribed(info.data.described);
    setRevision(info.data.revision);
    await tree.load();
    stream.start(info.data.revision);
    if (panel.path) await panel.reload();
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
$('btn-export').addEventListener('click', async () => {
  try {
    const r = await api.exportTree();
    const blob = new Blob([`${JSON.stringify(r.data, null, 2)}\n`], { type: 'application/json' });
    const url = URL.createObjectURL(blob);
    const a = h('a', { href: url, download: `configfsd-export-r${r.data.revision}.json`, class: 'hidden' });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    showOk(`Exported revision ${r.data.revision}.`);
  } catch (e) {
    showError(e);
  }
});
$('btn-clear').addEventListener('click', () => replaceChildren(messages));

updateTokenButton();
reloadAll().then(() => {
  const want = decodeURI(location.hash.slice(1));
  if (want.startsWith('/') && want !== '/') navigate(want);
});
