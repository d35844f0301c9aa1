// SPDX-License-Identifier: MIT
// The event stream end to end with the browser's own EventSource: opened on
// /api/v1/events?since=N, disconnected by a restart of configfsd (same
// database, same port), reconnected by the browser itself with the same
// URL and Last-Event-ID. It must see every revision after N, and none
// twice (api/openapi.yaml: "without gaps or duplicates"). Debian's
// Chromium driven by playwright-core; one TAP line per scenario; every wait
// is for a condition.
//
// usage: node events.mjs CONFIGFSD SOURCE_ROOT

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { Failure, ok, until as untilWithin } from './check.mjs';

const [configfsd, srcRoot] = process.argv.slice(2);
const require = createRequire(join(srcRoot, 'tools/node/package.json'));
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.CFS_CHROMIUM || '/usr/bin/chromium';
const WAIT_MS = 15000; // EventSource waits ~3 s between reconnects
const tmp = mkdtempSync(join(tmpdir(), 'cfs-e2e-events-'));
const db = join(tmp, 'events.db');
let server = null;
let browser = null;

/** check.mjs's until(), within WAIT_MS unless told otherwise. */
const until = (fn, what, ms = WAIT_MS) => untilWithin(fn, what, ms);

/** Start configfsd on @listen with the test's database; resolves to
 * { base, port } once it logs its port. */
function startServer(listen) {
  const args = ['--listen', listen, '--db', db, '--schema-dir', join(srcRoot, 'schemas'), '--log-level', 'info'];
  const child = spawn(configfsd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const srv = { child, log: '', exited: new Promise((r) => child.on('exit', (code, sig) => r({ code, sig }))) };
  server = srv;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" line in 10 s:\n${srv.log}`)), 10000);
    child.stderr.on('data', (d) => {
      srv.log += d;
      const m = /listening on .* \(port (\d+)\)/.exec(srv.log);
      if (m) {
        clearTimeout(timer);
        resolve({ base: `http://127.0.0.1:${m[1]}`, port: Number(m[1]) });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`configfsd exited with ${code}:\n${srv.log}`));
    });
  });
}

/** The bound on a stop (docs/security.md, "Stopping"; STOP_BOUND_MS of
 * server/configfsd/main.c). */
const STOP_BOUND_MS = 5000;

/** SIGTERM and wait; the exit must be clean (0, no sanitizer report) and
 * come within the bound, with the browser's EventSource still open. */
async function stopServer() {
  const srv = server;
  server = null;
  const t0 = Date.now();
  srv.child.kill('SIGTERM');
  const { code, sig } = await srv.exited;
  const took = Date.now() - t0;
  const report = /ERROR: (Address|Leak)Sanitizer|runtime error:/.test(srv.log);
  ok(code === 0 && !report, `configfsd: exit ${code ?? sig}${report ? ', sanitizer report' : ''}:\n${srv.log.split('\n').slice(-40).join('\n')}`);
  ok(took <= STOP_BOUND_MS, `configfsd: SIGTERM took ${took} ms with an EventSource open (bound ${STOP_BOUND_MS} ms)`);
}

async function call(base, method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

const revision = async (base) => (await call(base, 'GET', '/api/v1')).json.revision;

/** One revision of one record: a child of 02-simple-children. */
async function mkdir(base, name) {
  const r = await call(base, 'POST', '/api/v1/config/02-simple-children', { name });
  ok(r.status === 201, `mkdir ${name}: ${r.status}`);
}

/** One revision of two records: mkdir with an attribute (the id comes
 * on the last one only). */
async function mkdirWith(base, name, value) {
  const r = await call(base, 'POST', '/api/v1/config/02-simple-children', { name, attributes: { storeme: value } });
  ok(r.status === 201, `mkdir ${name}: ${r.status}`);
}

// The browser side: an EventSource that records every event it gets.
function openStream(url) {
  const ops = ['mkdir', 'rmdir', 'store', 'symlink', 'unlink', 'rename', 'reset', 'message'];
  window.__seen = [];
  window.__opens = 0;
  window.__errors = 0;
  const es = new EventSource(url);
  window.__es = es;
  es.onopen = () => { window.__opens += 1; };
  es.onerror = () => { window.__errors += 1; };
  for (const op of ops) {
    es.addEventListener(op, (e) => {
      const d = JSON.parse(e.data);
      window.__seen.push({ type: e.type, revision: d.revision, index: d.index, count: d.count, id: e.lastEventId });
    });
  }
}

const scenarios = [];
const scenario = (name, fn) => scenarios.push({ name, fn });

scenario('EventSource on ?since=N across a server restart sees every revision after N, none twice', async () => {
  let { base, port } = await startServer('127.0.0.1:0');
  await mkdir(base, 'before-1');
  const since = await revision(base); // N
  await mkdirWith(base, 'before-2', '7'); // N+1: already committed when the stream opens

  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${base}/api/v1`); // same origin as the stream
    await page.evaluate(openStream, `/api/v1/events?since=${since}`);
    await mkdir(base, 'live-1'); // N+2, live
    let last = await revision(base);
    const seenUpTo = (rev) => page.evaluate((r) => window.__seen.some((e) => e.revision === r && e.index + 1 === e.count), rev);
    await until(() => seenUpTo(last), `revision ${last} in the browser before the restart`);

    // the restart: same database, same port; the stream ends, the browser
    // reconnects by itself with the same URL and Last-Event-ID
    await stopServer();
    await until(() => page.evaluate(() => window.__errors > 0), 'the browser to notice the disconnect');
    ({ base } = await startServer(`127.0.0.1:${port}`));
    ok(base.endsWith(`:${port}`), `restarted on the same port (${base})`);
    ok((await revision(base)) === last, 'the restarted server replayed every revision');
    await mkdirWith(base, 'after-1', '8'); // committed whether or not the browser is back yet
    await until(() => page.evaluate(() => window.__opens >= 2 && window.__es.readyState === EventSource.OPEN), 'the browser to reconnect');
    await mkdir(base, 'after-2'); // live on the new connection
    last = await revision(base);
    await until(() => seenUpTo(last), `revision ${last} in the browser after the restart`);

    const seen = await page.evaluate(() => window.__seen);
    const keys = seen.map((e) => `${e.revision}.${e.index}`);
    const dups = keys.filter((k, i) => keys.indexOf(k) !== i);
    ok(dups.length === 0, `records seen twice: ${dups.join(', ')} (all: ${keys.join(' ')})`);
    ok(!seen.some((e) => e.type === 'reset'), 'no reset: the journal has every revision');
    const revs = [...new Set(seen.map((e) => e.revision))];
    const want = Array.from({ length: last - since }, (_, i) => since + 1 + i);
    ok(JSON.stringify(revs) === JSON.stringify(want), `revisions seen ${revs}, want ${want}`);
    for (const r of want) {
      const recs = seen.filter((e) => e.revision === r);
      ok(recs.length === recs[0].count, `revision ${r}: ${recs.length} of ${recs[0].count} records`);
      ok(recs.every((e, i) => e.index === i), `revision ${r}: records in order`);
      ok(recs[recs.length - 1].id === String(r), `revision ${r}: its last record carries id ${r} (${recs[recs.length - 1].id})`);
    }
    await page.evaluate(() => window.__es.close());
  } finally {
    await context.close();
  }
});

scenario('configfsd shuts down cleanly after the session (exit 0, no sanitizer report)', async () => {
  await stopServer();
});

async function main() {
  const t0 = Date.now();
  console.log(`1..${scenarios.length}`);
  let failed = 0;
  try {
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
      if (!server && i > 0) throw new Failure('no server (an earlier scenario failed)');
      await s.fn();
      console.log(`ok ${i + 1} - ${s.name} (${Date.now() - started} ms)`);
    } catch (e) {
      failed += 1;
      console.log(`not ok ${i + 1} - ${s.name}`);
      for (const line of String(e instanceof Failure ? e.message : e.stack).split('\n')) console.log(`# ${line}`);
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
  if (server && server.child.exitCode === null) server.child.kill('SIGTERM');
  if (code === 0 && !process.env.CFS_E2E_KEEP) rmSync(tmp, { recursive: true, force: true });
  else console.log(`# kept ${tmp}`);
}
process.exit(code);
