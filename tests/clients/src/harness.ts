// SPDX-License-Identifier: MIT
// harness.ts - live servers for the flows: configfsd on 127.0.0.1 and a
// port it picks, with a fresh database and the blob module; Prism's
// validating proxy in front of one. Each waits (bounded) for its
// "listening" line and is stopped with SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run through tests/clients/run.sh)`);
  return v;
};

export interface Proc {
  url: string;
  log: () => string;
  stop: () => Promise<void>;
}

// Start @cmd and wait until a line of its output matches @ready; the match's
// first group is the port.
function launch(cmd: string, args: string[], ready: RegExp, what: string, timeoutMs: number,
  cleanup: () => void = () => {}): Promise<{ child: ChildProcess; port: number; log: () => string }> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      cleanup();
      reject(new Error(`${what} did not start within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (b: Buffer) => {
      out += b.toString();
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]), log: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      cleanup();
      reject(new Error(`${what} exited (${code}) before it listened:\n${out}`));
    });
  });
}

function stopper(child: ChildProcess, cleanup: () => void): () => Promise<void> {
  return () => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      cleanup();
      resolve();
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      cleanup();
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export async function startConfigfsd(): Promise<Proc> {
  const dir = mkdtempSync(join(tmpdir(), 'cfs-clients-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  const { child, port, log } = await launch(env('CFS_CONFIGFSD'), [
    '--listen', '127.0.0.1:0',
    '--db', join(dir, 'configfsd.db'),
    '--schema-dir', join(env('CFS_SOURCE_ROOT'), 'schemas'),
    '--module', env('CFS_BLOB_MODULE'),
  ], /listening on http:\/\/\S+ \(port (\d+)\)/, 'configfsd', 10_000, cleanup);
  return { url: `http://127.0.0.1:${port}`, log, stop: stopper(child, cleanup) };
}

// A port nobody listens on now, for Prism, which cannot be told port 0.
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (a && typeof a === 'object' ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

// Prism in proxy mode: every request and response is validated against
// @spec; with --errors a violation is answered 422 (request) or 500
// (response) instead of being passed on, and each answer that has one
// carries it in the sl-violations header.
export async function startPrism(spec: string, upstream: string): Promise<Proc> {
  const port = await freePort();
  const { child, log } = await launch(env('CFS_PRISM'), [
    'proxy', spec, upstream, '--host', '127.0.0.1', '--port', String(port), '--errors',
  ], /Prism is listening on http:\/\/127\.0\.0\.1:(\d+)/, 'prism', 120_000);
  return { url: `http://127.0.0.1:${port}`, log, stop: stopper(child, () => {}) };
}

export const specFile = (): string => env('CFS_SPEC');

// What a validating proxy said about each response, if anything.
export class Violations {
  readonly found: string[] = [];
  // Record the sl-violations header of @response (Prism's); the flows
  // call it with every answer they get.
  saw(response: Response): void {
    const v = response.headers.get('sl-violations');
    if (v) this.found.push(`${response.url}: ${v}`);
  }
}

export const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');
export const unb64 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'base64'));
