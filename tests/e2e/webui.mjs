// SPDX-License-Identifier: MIT
// The browser tree editor (web/static/) end to end: the real configfsd on
// 127.0.0.1 port 0 with its own database and the shipped schemas, Debian's
// Chromium driven by playwright-core. Each scenario is one TAP line; every
// assertion looks at the DOM the user sees and at the server's state over
// the API. Nothing sleeps for a fixed time: every wait is for a condition.
// Any console error, uncaught page error, CSP violation or unexpected HTTP
// error status fails the scenario it happens in.
//
// usage: node webui.mjs CONFIGFSD SOURCE_ROOT

import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const [configfsd, srcRoot] = process.argv.slice(2);
const require = createRequire(join(srcRoot, 'tools/node/package.json'));
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.CFS_CHROMIUM || '/usr/bin/chromium';
const WAIT_MS = 10000;
const tmp = mkdtempSync(join(tmpdir(), 'cfs-e2e-'));
const servers = [];
let browser = null;

// ---- the server ---------------------------------------------------------------

/** Start configfsd; resolves to its base URL once it logs its port. */
function startServer(name, extra = []) {
  const db = join(tmp, `${name}.db`);
  const args = ['--listen', '127.0.0.1:0', '--db', db, '--schema-dir', join(srcRoot, 'schemas'),
    '--static-dir', join(srcRoot, 'web/static'), '--log-level', 'info', ...extra];
  const child = spawn(configfsd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const srv = { name, child, log: '', exited: new Promise((r) => child.on('exit', (code, sig) => r({ code, sig }))) };
  servers.push(srv);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no "listening" line in 10 s:\n${srv.log}`)), WAIT_MS);
    child.stderr.on('data', (d) => {
      srv.log += d;
      const m = /listening on .* \(port (\d+)\)/.exec(srv.log);
      if (m) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${m[1]}`);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name}: configfsd exited with ${code}:\n${srv.log}`));
    });
  });
}

/** The server's API, from outside the browser (curl's role). */
function client(base, token) {
  const call = async (method, path, body, headers = {}) => {
    const h = { ...headers };
    if (token) h.Authorization = `Bearer ${token}`;
    let data;
    if (body !== undefined) {
      h['Content-Type'] = 'application/json';
      data = JSON.stringify(body);
    }
    const res = await fetch(`${base}${path}`, { method, headers: h, body: data });
    const text = await res.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: res.status, json, text, etag: res.headers.get('ETag') };
  };
  const cfg = (p) => `/api/v1/config${p.split('/').map(encodeURIComponent).join('/')}`;
  return {
    get: (p) => call('GET', cfg(p)),
    value: async (p) => {
      const r = await call('GET', cfg(p), undefined, { Accept: 'application/json' });
      return r.status === 200 ? r.json.value : null;
    },
    status: async (p) => (await call('GET', cfg(p))).status,
    mkdir: (dir, name, attributes) => call('POST', cfg(dir), attributes ? { name, attributes } : { name }),
    store: (p, value) => call('PUT', cfg(p), { value }),
    call,
  };
}

// ---- checks -----------------------------------------------------------------------

class Failure extends Error {}

function ok(cond, what) {
  if (!cond) throw new Failure(what);
}

/** Poll @fn until it returns a truthy value (or throw @what after WAIT_MS). */
async function until(fn, what, ms = WAIT_MS) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Failure(`timed out waiting for ${what}${last instanceof Error ? ` (${last.message})` : ''}`);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 25)); // poll interval, not a wait for the condition
  }
}

// ---- the page ---------------------------------------------------------------------

/** A page with the watchers every scenario relies on. */
async function openPage(base, { width = 1024, height = 800 } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  page.problems = [];
  page.allowed = new Set();
  page.on('console', (m) => {
    if (m.type() !== 'error' && m.type() !== 'warning') return;
    // a refused request is reported by 'response' below, against the
    // statuses the scenario expects
    if (/^Failed to load resource: the server responded with a status of \d+/.test(m.text())) return;
    page.problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => page.problems.push(`page error: ${e.message}`));
  page.on('response', (r) => {
    const s = r.status();
    if (s < 400) return;
    const url = new URL(r.url());
    // no exception for /api/v1/schema/: the page asks only for the
    // subsystems GET /api/v1 lists as described
    if (!page.allowed.has(s)) page.problems.push(`unexpected HTTP ${s} for ${r.request().method()} ${url.pathname}`);
  });
  await page.exposeFunction('__cfsViolation', (v) => page.problems.push(`CSP violation: ${v}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__cfsViolation(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`));
  });
  await page.goto(base);
  await page.waitForSelector('body[data-ready="true"]', { timeout: WAIT_MS });
  return page;
}

const row = (path) => `[role="treeitem"][data-path="${path}"]`;
const rowName = (path) => `${row(path)} > .tree-row .tree-name`;

/** Click a tree row's name: selects it and opens it. */
async function openNode(page, path) {
  await page.click(rowName(path));
  await page.waitForFunction((p) => {
    const li = document.querySelector(`[role="treeitem"][data-path="${p}"]`);
    const title = document.querySelector('#panel-title');
    return li && li.getAttribute('aria-selected') === 'true' && title && title.textContent === p.split('/').pop()
      && document.querySelector('#panel .node-path code')?.textContent === p;
  }, path, { timeout: WAIT_MS });
}

/** Open each path of @paths in turn (ancestors first). */
async function openPath(page, path) {
  const names = path.split('/').filter(Boolean);
  let cur = '';
  for (const n of names) {
    cur += `/${n}`;
    await openNode(page, cur);
  }
}

const attrInput = (name) => `#panel form[data-attr="${name}"] :is(input, select)`;

async function setAttr(page, name, value) {
  const sel = attrInput(name);
  const tag = await page.$eval(sel, (e) => e.tagName);
  if (tag === 'SELECT') await page.selectOption(sel, value);
  else await page.fill(sel, value);
  await page.click(`#panel form[data-attr="${name}"] button[type=submit]`);
}

async function alertText(page) {
  return page.$eval('#messages', (e) => e.textContent);
}

async function clearMessages(page) {
  await page.$eval('#messages', (e) => e.replaceChildren());
}

// ---- scenarios ----------------------------------------------------------------------

const scenarios = [];
const scenario = (name, fn) => scenarios.push({ name, fn });
let base;
let api;
let page;

scenario('the tree lists the subsystems with their kinds, no CSP violation on load', async () => {
  page = await openPage(base);
  const info = (await api.call('GET', '/api/v1')).json;
  const names = await page.$$eval('#tree > [role="treeitem"]', (lis) => lis.map((li) => li.dataset.path.slice(1)));
  ok(JSON.stringify(names) === JSON.stringify(info.subsystems), `tree shows ${names}, server has ${info.subsystems}`);
  const kinds = await page.$$eval('#tree > [role="treeitem"]', (lis) => lis.map((li) => li.dataset.kind));
  ok(kinds.every((k) => k === 'subsystem'), `top-level kinds ${kinds}`);
  const csp = (await fetch(base)).headers.get('content-security-policy');
  ok(csp && csp.includes("script-src 'self'"), `the page is served with the CSP (${csp})`);
});

scenario('keyboard: arrows move, Right expands lazily, Left collapses, Enter selects', async () => {
  await page.focus(row('/01-childless'));
  const target = (await api.call('GET', '/api/v1')).json.subsystems.indexOf('fakenbd');
  for (let i = 0; i < target; i++) await page.keyboard.press('ArrowDown');
  ok(await page.evaluate(() => document.activeElement.dataset.path) === '/fakenbd', 'ArrowDown reaches /fakenbd');
  await page.keyboard.press('ArrowRight');
  await page.waitForSelector(`${row('/fakenbd')}[aria-expanded="true"] ${row('/fakenbd/pending')}`, { timeout: WAIT_MS });
  const kind = await page.$eval(row('/fakenbd/pending'), (e) => e.dataset.kind);
  ok(kind === 'default group', `pending/ is shown as a default group (${kind})`);
  await page.keyboard.press('ArrowRight');
  ok(await page.evaluate(() => document.activeElement.dataset.path) === '/fakenbd/pending', 'Right moves to the first child');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#panel .node-path code')?.textContent === '/fakenbd/pending');
  await page.keyboard.press('ArrowLeft');
  ok(await page.evaluate(() => document.activeElement.dataset.path) === '/fakenbd', 'Left moves to the parent');
  await page.keyboard.press('ArrowLeft');
  ok(await page.$eval(row('/fakenbd'), (e) => e.getAttribute('aria-expanded')) === 'false', 'Left collapses');
  const tabbable = await page.$$eval('[role="treeitem"][tabindex="0"]', (l) => l.length);
  ok(tabbable === 1, `one tree row is in the tab order (${tabbable})`);
});

scenario('fakenbd: create a disk with an initial attribute (one change)', async () => {
  await openPath(page, '/fakenbd/pending');
  const before = (await api.call('GET', '/api/v1')).json.revision;
  await page.fill('#panel .mkdir-form input[required]', 'disk1');
  await page.getByLabel('target', { exact: true }).fill('10.0.0.1');
  await page.click('#panel .mkdir-form button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#panel .node-path code')?.textContent === '/fakenbd/pending/disk1');
  ok(await api.value('/fakenbd/pending/disk1/target') === '10.0.0.1', 'the server has target 10.0.0.1');
  ok((await api.call('GET', '/api/v1')).json.revision === before + 1, 'mkdir and store are one revision');
  ok(await page.$eval(attrInput('target'), (e) => e.value) === '10.0.0.1', 'the panel shows the value');
  ok(await page.$eval(row('/fakenbd/pending/disk1'), (e) => e.dataset.kind) === 'item', 'the tree shows the new item');
});

scenario('store: a valid value is saved, an invalid one shows the rule and changes nothing', async () => {
  page.allowed = new Set([422]);
  await setAttr(page, 'device', '/dev/nbd0');
  await until(async () => (await api.value('/fakenbd/pending/disk1/device')) === '/dev/nbd0', 'device to be /dev/nbd0 on the server');
  await page.waitForFunction(() => document.querySelector('#status').textContent.includes('Saved device'));
  // refused by the client's check of the schema (the same rule the server has)
  await setAttr(page, 'target', '300.1.1.1');
  await page.waitForSelector('#panel form[data-attr="target"] .field-error:not([hidden])');
  const err = await page.$eval('#panel form[data-attr="target"] .field-error', (e) => e.textContent);
  ok(err.includes('must be an IPv4 address'), `the field names the rule (${err})`);
  ok(await page.$eval(attrInput('target'), (e) => e.getAttribute('aria-invalid')) === 'true', 'the input is marked invalid');
  ok(await api.value('/fakenbd/pending/disk1/target') === '10.0.0.1', 'target unchanged on the server');
  await page.click('#panel form[data-attr="target"] button.revert');
  // refused by the server: a subsystem written in C, without a schema
  await clearMessages(page);
  await api.mkdir('/02-simple-children', 'kid');
  await openPath(page, '/02-simple-children/kid');
  ok((await page.textContent('#panel')).includes('No schema for this subsystem'), 'plain inputs without a schema');
  await setAttr(page, 'storeme', 'abc');
  await page.waitForSelector('#messages .msg');
  const alert = await alertText(page);
  ok(/Unprocessable Content \(422 EINVAL\)/.test(alert) && alert.includes('store /02-simple-children/kid/storeme'), `the alert shows title, status, errno, detail (${alert})`);
  ok(await page.$eval('#messages', (e) => e.getAttribute('role')) === 'alert', 'the message area is role=alert');
  ok((await api.value('/02-simple-children/kid/storeme')) === '0', 'storeme unchanged on the server');
  await setAttr(page, 'storeme', '42');
  await until(async () => (await api.value('/02-simple-children/kid/storeme')) === '42', 'storeme 42');
});

scenario('commit: refused with the server\'s rule while a required value is unset, then committed and uncommitted', async () => {
  page.allowed = new Set([422]);
  await clearMessages(page);
  await api.mkdir('/fakenbd/pending', 'disk2', { target: '10.0.0.2' });
  await openPath(page, '/fakenbd/pending/disk2');
  await page.click('#panel button:text-is("Commit")');
  await page.waitForSelector('#messages .msg');
  const alert = await alertText(page);
  ok(alert.includes('required before commit: device') && alert.includes('EINVAL'), `the alert names the rule (${alert})`);
  ok(await api.status('/fakenbd/pending/disk2') === 200, 'disk2 stays in pending/');
  await setAttr(page, 'device', '/dev/nbd1');
  await until(async () => (await api.value('/fakenbd/pending/disk2/device')) === '/dev/nbd1', 'device set');
  await page.click('#panel button:text-is("Commit")');
  await page.waitForFunction(() => document.querySelector('#panel .node-path code')?.textContent === '/fakenbd/live/disk2');
  ok(await api.status('/fakenbd/live/disk2') === 200 && await api.status('/fakenbd/pending/disk2') === 404, 'the server has disk2 in live/');
  await page.waitForSelector(row('/fakenbd/live/disk2'));
  await until(async () => !(await page.$(row('/fakenbd/pending/disk2'))), 'pending/disk2 to leave the tree');
  ok((await page.textContent('#panel .node-path')).includes('live'), 'the panel marks it live');
  await page.click('#panel button:text-is("Uncommit")');
  await page.waitForFunction(() => document.querySelector('#panel .node-path code')?.textContent === '/fakenbd/pending/disk2');
  ok(await api.status('/fakenbd/pending/disk2') === 200, 'uncommitted on the server');
});

scenario('usb_gadget: create a link from a config to a function, follow it, remove it', async () => {
  page.allowed = new Set();
  await api.mkdir('/usb_gadget', 'g1');
  await api.mkdir('/usb_gadget/g1/functions', 'ncm.usb0');
  await openPath(page, '/usb_gadget/g1/configs');
  await page.fill('#panel .mkdir-form input[required]', 'c.1');
  await page.getByLabel('MaxPower').fill('500');
  await page.click('#panel .mkdir-form button[type=submit]');
  await page.waitForFunction(() => document.querySelector('#panel .node-path code')?.textContent === '/usb_gadget/g1/configs/c.1');
  ok(await api.value('/usb_gadget/g1/configs/c.1/MaxPower') === '500', 'MaxPower 500 on the server');
  await page.getByLabel('Target', { exact: true }).fill('/usb_gadget/g1/functions/ncm.usb0');
  await page.click('#panel .symlink-form button[type=submit]');
  const link = '/usb_gadget/g1/configs/c.1/ncm.usb0';
  await page.waitForSelector(`${row(link)}[data-kind="link"]`);
  const shown = await page.$eval(`${row(link)} .link-target`, (e) => e.textContent);
  ok(shown.includes('/usb_gadget/g1/functions/ncm.usb0'), `the tree shows the link's target (${shown})`);
  const r = await api.get(link);
  ok(r.status === 200 && r.json.target === '/usb_gadget/g1/functions/ncm.usb0', 'readlink on the server');
  // Enter on a link goes to its target
  await page.focus(row(link));
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#panel .node-path code')?.textContent === '/usb_gadget/g1/functions/ncm.usb0');
  ok(await page.$eval(row('/usb_gadget/g1/functions/ncm.usb0'), (e) => e.getAttribute('aria-selected')) === 'true', 'the target is selected in the tree');
  await openNode(page, '/usb_gadget/g1/configs/c.1');
  await page.click('#panel button[aria-label="Remove link ncm.usb0"]');
  await page.waitForSelector('#dlg-confirm[open]');
  await page.click('#confirm-ok');
  await until(async () => (await api.status(link)) === 404, 'the link to be gone on the server');
  await until(async () => !(await page.$(row(link))), 'the link row to leave the tree');
});

scenario('lio target: a LUN links to a backstore; a wrong target shows the rule', async () => {
  page.allowed = new Set([422]);
  await clearMessages(page);
  const T = '/target/iscsi/iqn.2003-01.org.example:t1/tpgt_1';
  for (const [dir, name] of [['/target/core', 'fileio_0'], ['/target/core/fileio_0', 'disk1'], ['/target', 'iscsi'],
    ['/target/iscsi', 'iqn.2003-01.org.example:t1'], ['/target/iscsi/iqn.2003-01.org.example:t1', 'tpgt_1'], [`${T}/lun`, 'lun_0']]) {
    const m = await api.mkdir(dir, name);
    ok(m.status === 201, `mkdir ${dir}/${name}: ${m.status} ${m.text}`);
  }
  await openPath(page, `${T}/lun/lun_0`);
  await page.getByLabel('Target', { exact: true }).fill('/target/core/fileio_0');
  await page.click('#panel .symlink-form button[type=submit]');
  await page.waitForSelector('#messages .msg');
  const alert = await alertText(page);
  ok(alert.includes('may point only at') && alert.includes('422'), `the alert names the rule (${alert})`);
  await page.getByLabel('Target', { exact: true }).fill('/target/core/fileio_0/disk1');
  await page.click('#panel .symlink-form button[type=submit]');
  await page.waitForSelector(`${row(`${T}/lun/lun_0/disk1`)}[data-kind="link"]`);
  ok((await api.get(`${T}/lun/lun_0/disk1`)).json.target === '/target/core/fileio_0/disk1', 'the server has the link');
});

scenario('live: changes made outside the page appear through the event stream', async () => {
  page.allowed = new Set();
  await page.waitForFunction(() => document.querySelector('#conn').dataset.state === 'live');
  await openNode(page, '/02-simple-children/kid');
  await api.mkdir('/02-simple-children', 'from-outside');
  await page.waitForSelector(row('/02-simple-children/from-outside'), { timeout: WAIT_MS });
  await api.store('/02-simple-children/kid/storeme', '77');
  await page.waitForFunction(() => document.querySelector('#panel form[data-attr="storeme"] input').value === '77');
  await api.call('DELETE', '/api/v1/config/02-simple-children/from-outside');
  await until(async () => !(await page.$(row('/02-simple-children/from-outside'))), 'the removed item to leave the tree');
  const rev = (await api.call('GET', '/api/v1')).json.revision;
  await page.waitForFunction((r) => document.querySelector('#revision').textContent === `revision ${r}`, rev);
});

scenario('conflict: a value changed elsewhere while editing is a 412 with a reload, not a lost update', async () => {
  page.allowed = new Set([412]);
  await clearMessages(page);
  await openPath(page, '/fakenbd/pending/disk1');
  await page.fill(attrInput('device'), '/dev/mine');
  await api.store('/fakenbd/pending/disk1/device', '/dev/theirs');
  await page.click('#panel form[data-attr="device"] button[type=submit]');
  await page.waitForSelector('#messages .msg[data-status="412"]');
  const alert = await alertText(page);
  ok(alert.includes('Conflict') && alert.includes('ESTALE'), `the alert says conflict (${alert})`);
  ok(await api.value('/fakenbd/pending/disk1/device') === '/dev/theirs', 'the other writer\'s value stands');
  await page.click('#messages button:text-is("Reload the value")');
  await page.waitForFunction(() => document.querySelector('#panel form[data-attr="device"] input').value === '/dev/theirs');
  await setAttr(page, 'device', '/dev/mine');
  await until(async () => (await api.value('/fakenbd/pending/disk1/device')) === '/dev/mine', 'the retried store');
});

scenario('delete: asks first; Cancel keeps the item, Delete removes it', async () => {
  page.allowed = new Set();
  await openPath(page, '/fakenbd/pending/disk2');
  await page.click('#panel button:text-is("Delete…")');
  await page.waitForSelector('#dlg-confirm[open]');
  ok(await page.evaluate(() => document.activeElement.id) === 'confirm-cancel', 'focus is on Cancel');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#dlg-confirm:not([open])', { state: 'attached' });
  ok(await api.status('/fakenbd/pending/disk2') === 200, 'Cancel deletes nothing');
  await page.click('#panel button:text-is("Delete…")');
  await page.click('#confirm-ok');
  await until(async () => (await api.status('/fakenbd/pending/disk2')) === 404, 'disk2 to be deleted on the server');
  await until(async () => !(await page.$(row('/fakenbd/pending/disk2'))), 'disk2 to leave the tree');
  await page.waitForFunction(() => document.querySelector('#panel .node-path code')?.textContent === '/fakenbd/pending');
});

scenario('history of the selected node, newest first', async () => {
  await openPath(page, '/fakenbd/pending/disk1');
  await page.click('#panel button:text-is("History")');
  await page.waitForSelector('#history:not([hidden]) tbody tr');
  const ops = await page.$$eval('#history tbody tr td:nth-child(4)', (tds) => tds.map((t) => t.textContent));
  ok(ops[ops.length - 1] === 'mkdir' && ops[0] === 'store', `history rows ${ops}`);
});

scenario('narrow screen: tree and panel stack, nothing wider than the window', async () => {
  const narrow = await openPage(base, { width: 420, height: 800 });
  try {
    await openPath(narrow, '/fakenbd/pending/disk1');
    const over = await narrow.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    ok(over <= 0, `page is ${over}px wider than the window`);
    const [t, p] = await narrow.evaluate(() => ['.tree-pane', '#panel'].map((s) => document.querySelector(s).getBoundingClientRect().top));
    ok(p > t, 'the panel is below the tree');
    ok(narrow.problems.length === 0, narrow.problems.join('; '));
  } finally {
    await narrow.context().close();
  }
});

scenario('tokens: a 401 asks for a token, which then reaches the API and the event stream', async () => {
  const token = randomBytes(24).toString('hex');
  const file = join(tmp, 'tokens');
  writeFileSync(file, `e2e writer sha256:${createHash('sha256').update(token).digest('hex')}\n`);
  chmodSync(file, 0o600);
  const sbase = await startServer('tokens', ['--tokens', file]);
  const sapi = client(sbase, token);
  const context = await browser.newContext();
  const p = await context.newPage();
  p.setDefaultTimeout(WAIT_MS);
  const problems = [];
  p.on('pageerror', (e) => problems.push(e.message));
  p.on('response', (r) => {
    if (r.status() >= 400 && r.status() !== 401) problems.push(`HTTP ${r.status()} ${r.url()}`);
  });
  try {
    await p.goto(sbase);
    await p.waitForSelector('#dlg-token[open]', { timeout: WAIT_MS });
    ok(await p.evaluate(() => document.activeElement.id) === 'token-input', 'focus is in the token field');
    await p.fill('#token-input', token);
    await p.keyboard.press('Enter');
    await p.waitForSelector('body[data-ready="true"]', { timeout: WAIT_MS });
    await p.waitForSelector(row('/fakenbd'));
    await p.waitForFunction(() => document.querySelector('#conn').dataset.state === 'live');
    ok(await p.evaluate(() => sessionStorage.getItem('configfsd.token')) === token, 'the token is kept in sessionStorage');
    await sapi.mkdir('/02-simple-children', 'authed');
    await p.click(rowName('/02-simple-children'));
    await p.waitForSelector(row('/02-simple-children/authed'));
    await sapi.mkdir('/02-simple-children', 'authed-live');
    await p.waitForSelector(row('/02-simple-children/authed-live'), { timeout: WAIT_MS });
    ok(problems.length === 0, problems.join('; '));
  } finally {
    await context.close();
  }
});

scenario('scoped token: the tree shows only its subtree and the path that leads to it', async () => {
  const hash = (t) => createHash('sha256').update(t).digest('hex');
  const admin = randomBytes(24).toString('hex');
  const scoped = randomBytes(24).toString('hex');
  const file = join(tmp, 'tokens-scoped');
  writeFileSync(file, `root admin sha256:${hash(admin)}\nteam writer sha256:${hash(scoped)} /02-simple-children/mine\n`);
  chmodSync(file, 0o600);
  const sbase = await startServer('scoped', ['--tokens', file]);
  const root = client(sbase, admin);
  ok((await root.mkdir('/02-simple-children', 'mine', { storeme: '5' })).status === 201, 'mine made');
  ok((await root.mkdir('/02-simple-children', 'mine_not')).status === 201, 'mine_not made');
  const context = await browser.newContext();
  const p = await context.newPage();
  p.setDefaultTimeout(WAIT_MS);
  const problems = [];
  p.on('pageerror', (e) => problems.push(e.message));
  p.on('response', (r) => {
    if (r.status() >= 400 && r.status() !== 401) problems.push(`HTTP ${r.status()} ${r.url()}`);
  });
  try {
    await p.goto(sbase);
    await p.waitForSelector('#dlg-token[open]', { timeout: WAIT_MS });
    await p.fill('#token-input', scoped);
    await p.keyboard.press('Enter');
    await p.waitForSelector('body[data-ready="true"]', { timeout: WAIT_MS });
    await p.waitForSelector(row('/02-simple-children'));
    ok(await p.locator(row('/fakenbd')).count() === 0, 'no other subsystem is shown');
    ok(await p.locator(row('/usb_gadget')).count() === 0, 'no other subsystem is shown');
    await p.click(rowName('/02-simple-children'));
    await p.waitForSelector(row('/02-simple-children/mine'));
    ok(await p.locator(row('/02-simple-children/mine_not')).count() === 0, 'a sibling whose name starts alike is not shown');
    await p.waitForFunction(() => document.querySelector('#conn').dataset.state === 'live');
    await p.click(rowName('/02-simple-children/mine'));
    await p.waitForFunction(() => document.querySelector('#panel form[data-attr="storeme"] input')?.value === '5');
    // a change outside the subtree does not reach the page; one inside,
    // published after it, does
    await root.mkdir('/02-simple-children', 'later_outside');
    await root.store('/02-simple-children/mine/storeme', '6');
    await p.waitForFunction(() => document.querySelector('#panel form[data-attr="storeme"] input').value === '6');
    ok(await p.locator(row('/02-simple-children/later_outside')).count() === 0, 'an item made outside is not shown');
    ok(problems.length === 0, problems.join('; '));
  } finally {
    await context.close();
  }
});

scenario('no console error, page error or CSP violation in the whole session', async () => {
  ok(page.problems.length === 0, page.problems.join('; '));
});

// In the sanitizer build this is where ASan/UBSan/LSan speak up.
scenario('configfsd shuts down cleanly after the session (exit 0, no sanitizer report)', async () => {
  await page.context().close();
  page = null;
  for (const srv of servers) {
    srv.child.kill('SIGTERM');
    const { code, sig } = await srv.exited;
    const report = /ERROR: (Address|Leak)Sanitizer|runtime error:/.test(srv.log);
    ok(code === 0 && !report, `${srv.name}: exit ${code ?? sig}${report ? ', sanitizer report' : ''}:\n${srv.log.split('\n').slice(-40).join('\n')}`);
  }
});

// ---- the run --------------------------------------------------------------------------

async function main() {
  const t0 = Date.now();
  console.log(`1..${scenarios.length}`);
  let failed = 0;
  try {
    base = await startServer('main');
    api = client(base);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    });
  } catch (e) {
    console.log(`# setup failed: ${e.message}`);
    scenarios.forEach((s, i) => console.log(`not ok ${i + 1} - ${s.name} # setup failed`));
    return 1;
  }
  for (const [i, s] of scenarios.entries()) {
    const started = Date.now();
    try {
      if (page) page.problems.length = 0;
      await s.fn();
      if (page && page.problems.length) throw new Failure(page.problems.join('; '));
      console.log(`ok ${i + 1} - ${s.name} (${Date.now() - started} ms)`);
    } catch (e) {
      failed += 1;
      console.log(`not ok ${i + 1} - ${s.name}`);
      for (const line of String(e instanceof Failure ? e.message : e.stack).split('\n')) console.log(`# ${line}`);
      if (page) {
        const shot = join(process.env.CFS_E2E_ARTIFACTS || tmp, `fail-${i + 1}.png`);
        await page.screenshot({ path: shot, fullPage: true }).catch(() => {});
        console.log(`# screenshot: ${shot}`);
      }
    }
  }
  console.log(`# ${scenarios.length - failed}/${scenarios.length} passed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return failed ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} finally {
  if (browser) await browser.close().catch(() => {});
  for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGTERM');
  if (code === 0 && !process.env.CFS_E2E_KEEP) rmSync(tmp, { recursive: true, force: true });
  else console.log(`# kept ${tmp}`);
}
process.exit(code);
