// SPDX-License-Identifier: MIT
// flow-common.ts - the whole flow (mkdir, store text and bytes, read,
// symlink, commit by rename, a failing batch, a stale If-Match, history,
// export, rmdir, import, cleanup) written once against Client, and run
// through the clients of orval (fetch and axios), openapi-typescript-codegen
// and swagger-typescript-api (flow-more.ts). Each Client method is a thin
// call of its generator's typed function: the types the generator made
// are checked by tsc --strict where the adapters use them, and every
// answer comes back as status, body and ETag for the flow to assert.
import assert from 'node:assert/strict';
import { b64, unb64 } from './harness.js';

export interface Answer<T> {
  // 'ok' where the client gives the body of a success and not its status
  // (openapi-typescript-codegen resolves to the body, throws on errors)
  status: number | 'ok';
  data: T | undefined; // the success body
  problem?: { errno?: string; op_index?: number }; // the error body
  etag?: string | null;
}

export interface Named { name: string }
export interface Valued { value?: string; encoding?: string }
export interface Client {
  root(): Promise<Answer<{ children: Named[] }>>;
  mkdir(parent: string, body: { name: string; attributes?: Record<string, string> }): Promise<Answer<{ path: string }>>;
  putValue(path: string, body: { value: string; encoding?: 'base64' }, ifMatch?: string): Promise<Answer<Valued>>;
  getValue(path: string): Promise<Answer<Valued>>;
  getNode(path: string): Promise<Answer<{ attributes: Valued[] }>>;
  putLink(path: string, target: string): Promise<Answer<{ target: string }>>;
  getLink(path: string): Promise<Answer<{ target: string }>>;
  rename(from: string, to: string): Promise<Answer<{ path: string }>>;
  batchMkdirSymlink(dir: string, link: string, target: string): Promise<Answer<unknown>>;
  history(path: string): Promise<Answer<{ entries: { op: string; value?: string | null }[] }>>;
  exportImport(): Promise<{ exported: Answer<unknown>; rm: Answer<unknown>; imported: Answer<{ changed: boolean }> }>;
  remove(path: string): Promise<Answer<unknown>>;
}

// @a succeeded with @code (or with a success whose code the client hides)
const succeeded = <T>(a: Answer<T>, code: number): void =>
  assert.ok(a.status === code || a.status === 'ok', `${a.status} is not ${code}: ${JSON.stringify(a.problem)}`);

export async function commonFlow(c: Client): Promise<void> {
  const root = await c.root();
  succeeded(root, 200);
  const names = root.data!.children.map((x) => x.name);
  for (const n of ['02-simple-children', 'fakenbd', 'usb_gadget', 'blob']) assert.ok(names.includes(n), n);

  for (const [parent, name] of [
    ['02-simple-children', 'child1'],
    ['usb_gadget', 'g1'],
    ['usb_gadget/g1/functions', 'ncm.usb0'],
    ['usb_gadget/g1/configs', 'c.1'],
  ] as const) {
    const made = await c.mkdir(parent, { name });
    succeeded(made, 201);
    assert.equal(made.data!.path, `/${parent}/${name}`);
  }
  const disk = await c.mkdir('fakenbd/pending', { name: 'disk1', attributes: { target: '10.0.0.1', device: '/dev/sda' } });
  succeeded(disk, 201);

  const stored = await c.putValue('02-simple-children/child1/storeme', { value: '42' });
  succeeded(stored, 200);
  assert.equal(stored.data!.value, '42');
  const etag42 = stored.etag!;
  assert.match(etag42, /^"\d+"$/);
  const read = await c.getValue('02-simple-children/child1/storeme');
  succeeded(read, 200);
  assert.equal(read.data!.value, '42');

  const bytes = new Uint8Array([0x00, 0xfe, 0x7f, 0x80]);
  const bin = await c.putValue('blob/data', { value: b64(bytes), encoding: 'base64' });
  succeeded(bin, 200);
  const binRead = await c.getValue('blob/data');
  assert.equal(binRead.data!.encoding, 'base64');
  assert.deepEqual(unb64(binRead.data!.value!), bytes);

  const node = await c.getNode('02-simple-children/child1');
  succeeded(node, 200);
  assert.equal(node.data!.attributes[0]!.value, '42');

  const link = await c.putLink('usb_gadget/g1/configs/c.1/ncm.usb0', '/usb_gadget/g1/functions/ncm.usb0');
  succeeded(link, 201);
  const readlink = await c.getLink('usb_gadget/g1/configs/c.1/ncm.usb0');
  assert.equal(readlink.data!.target, '/usb_gadget/g1/functions/ncm.usb0');

  const commit = await c.rename('/fakenbd/pending/disk1', '/fakenbd/live/disk1');
  succeeded(commit, 200);
  assert.equal(commit.data!.path, '/fakenbd/live/disk1');

  // all or nothing: the symlink is refused, the mkdir before it undone
  const failed = await c.batchMkdirSymlink('/02-simple-children/b1', '/02-simple-children/b1/l', '/usb_gadget/g1/functions/ncm.usb0');
  assert.equal(failed.status, 403);
  assert.equal(failed.problem!.op_index, 1);
  assert.equal(failed.problem!.errno, 'EPERM');
  assert.equal((await c.getNode('02-simple-children/b1')).status, 404);

  const newer = await c.putValue('02-simple-children/child1/storeme', { value: '43' });
  succeeded(newer, 200);
  const stale = await c.putValue('02-simple-children/child1/storeme', { value: '44' }, etag42);
  assert.equal(stale.status, 412);
  assert.equal(stale.problem!.errno, 'ESTALE');

  const journal = await c.history('/02-simple-children/child1');
  succeeded(journal, 200);
  assert.deepEqual(journal.data!.entries.filter((e) => e.op === 'store').map((e) => e.value), ['43', '42']);

  const { exported, rm, imported } = await c.exportImport();
  succeeded(exported, 200);
  succeeded(rm, 204);
  succeeded(imported, 200);
  assert.equal(imported.data!.changed, true);
  assert.equal((await c.getValue('02-simple-children/child1/storeme')).data!.value, '43');

  for (const p of ['usb_gadget/g1/configs/c.1/ncm.usb0', '02-simple-children/child1']) {
    const del = await c.remove(p);
    succeeded(del, 204);
  }
  assert.equal((await c.getNode('02-simple-children/child1')).status, 404);
}
