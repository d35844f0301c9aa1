// SPDX-License-Identifier: MIT
// flow-openapi-fetch.ts - the whole flow through the client openapi-fetch
// makes from the types openapi-typescript generated: no interceptor, no
// custom serializer, only the base URL configured. Every answer is
// shown to @v (a validating proxy's verdict, when there is one).
import assert from 'node:assert/strict';
import createClient from 'openapi-fetch';
import type { components, paths } from '../gen/openapi-typescript/schema.js';
import { b64, unb64, type Violations } from './harness.js';

type ExportDocument = components['schemas']['ExportDocument'];

export async function openapiFetchFlow(baseUrl: string, v: Violations): Promise<void> {
  const api = createClient<paths>({ baseUrl });
  const at = (path: string) => ({ path: { path } });

  // ls /sys/kernel/config
  const root = await api.GET('/api/v1/config/');
  v.saw(root.response);
  assert.equal(root.response.status, 200);
  const names = root.data!.children.map((c) => c.name);
  for (const n of ['02-simple-children', 'fakenbd', 'usb_gadget', 'blob']) assert.ok(names.includes(n), n);

  // mkdir, as a generator sends a multi-segment path: one encoded segment
  for (const [parent, name] of [
    ['02-simple-children', 'child1'],
    ['usb_gadget', 'g1'],
    ['usb_gadget/g1/functions', 'ncm.usb0'],
    ['usb_gadget/g1/configs', 'c.1'],
  ]) {
    const made = await api.POST('/api/v1/config/{path}', { params: at(parent), body: { name } });
    v.saw(made.response);
    assert.equal(made.response.status, 201, JSON.stringify(made.error));
    assert.equal(made.data!.path, `/${parent}/${name}`);
  }
  const disk = await api.POST('/api/v1/config/{path}', {
    params: at('fakenbd/pending'),
    body: { name: 'disk1', attributes: { target: '10.0.0.1', device: '/dev/sda' } },
  });
  v.saw(disk.response);
  assert.equal(disk.response.status, 201, JSON.stringify(disk.error));

  // echo 42 > storeme: the text, not its JSON
  const stored = await api.PUT('/api/v1/value/{path}', {
    params: at('02-simple-children/child1/storeme'),
    body: { value: '42' },
  });
  v.saw(stored.response);
  assert.equal(stored.response.status, 200, JSON.stringify(stored.error));
  assert.equal(stored.data!.value, '42');
  const etag42 = stored.response.headers.get('etag')!;
  assert.match(etag42, /^"\d+"$/);

  // cat storeme: a string, never the number 42, no newline
  const read = await api.GET('/api/v1/value/{path}', { params: at('02-simple-children/child1/storeme') });
  v.saw(read.response);
  assert.equal(read.response.status, 200);
  const value: string | undefined = read.data!.value;
  assert.equal(value, '42');
  assert.equal(read.response.headers.get('etag'), etag42);
  const text = await api.PUT('/api/v1/value/{path}', {
    params: at('fakenbd/pending/disk1/device'),
    body: { value: '/dev/sdb' },
  });
  v.saw(text.response);
  assert.equal(text.data?.value, '/dev/sdb');

  // bytes that are not UTF-8, into a binary attribute, and back
  const bytes = new Uint8Array([0xff, 0x00, 0x01, 0x80, 0xc3]);
  const bin = await api.PUT('/api/v1/value/{path}', {
    params: at('blob/data'),
    body: { value: b64(bytes), encoding: 'base64' },
  });
  v.saw(bin.response);
  assert.equal(bin.response.status, 200, JSON.stringify(bin.error));
  assert.equal(bin.data!.binary, true);
  const binRead = await api.GET('/api/v1/value/{path}', { params: at('blob/data') });
  v.saw(binRead.response);
  assert.equal(binRead.data!.encoding, 'base64');
  assert.deepEqual(unb64(binRead.data!.value!), bytes);
  const notB64 = await api.PUT('/api/v1/value/{path}', {
    params: at('blob/data'),
    body: { value: 'AA=', encoding: 'base64' },
  });
  v.saw(notB64.response);
  assert.equal(notB64.response.status, 400);
  assert.equal(notB64.error!.errno, 'EINVAL');

  // ls child1
  const node = await api.GET('/api/v1/node/{path}', { params: { ...at('02-simple-children/child1'), query: { depth: 1 } } });
  v.saw(node.response);
  assert.equal(node.response.status, 200);
  assert.equal(node.data!.kind, 'item');
  assert.equal(node.data!.attributes.find((a) => a.name === 'storeme')?.value, '42');

  // ln -s functions/ncm.usb0 configs/c.1/ncm.usb0, readlink
  const link = await api.PUT('/api/v1/link/{path}', {
    params: at('usb_gadget/g1/configs/c.1/ncm.usb0'),
    body: { target: '/usb_gadget/g1/functions/ncm.usb0' },
  });
  v.saw(link.response);
  assert.equal(link.response.status, 201, JSON.stringify(link.error));
  assert.equal(link.response.headers.get('location'), '/api/v1/config/usb_gadget/g1/configs/c.1/ncm.usb0');
  const readlink = await api.GET('/api/v1/link/{path}', { params: at('usb_gadget/g1/configs/c.1/ncm.usb0') });
  v.saw(readlink.response);
  assert.equal(readlink.data!.target, '/usb_gadget/g1/functions/ncm.usb0');

  // mv pending/disk1 live/disk1
  const commit = await api.POST('/api/v1/rename', {
    body: { from: '/fakenbd/pending/disk1', to: '/fakenbd/live/disk1' },
  });
  v.saw(commit.response);
  assert.equal(commit.response.status, 200, JSON.stringify(commit.error));
  assert.equal(commit.data!.live, true);

  // a batch whose second op fails: the typed op_index, nothing kept
  const batch = await api.POST('/api/v1/batch', {
    body: {
      ops: [
        { op: 'mkdir', path: '/02-simple-children/b1' },
        { op: 'store', path: '/02-simple-children/b1/storeme', value: 'not a number' },
      ],
    },
  });
  v.saw(batch.response);
  assert.equal(batch.response.status, 422);
  const opIndex: number | undefined = batch.error!.op_index;
  assert.equal(opIndex, 1);
  const gone = await api.GET('/api/v1/node/{path}', { params: at('02-simple-children/b1') });
  v.saw(gone.response);
  assert.equal(gone.response.status, 404);

  // a store made stale by another one: 412, the newer value stands
  const newer = await api.PUT('/api/v1/value/{path}', {
    params: at('02-simple-children/child1/storeme'),
    body: { value: 43 },
  });
  v.saw(newer.response);
  assert.equal(newer.data!.value, '43');
  const stale = await api.PUT('/api/v1/value/{path}', {
    params: { ...at('02-simple-children/child1/storeme'), header: { 'If-Match': etag42 } },
    body: { value: '44' },
  });
  v.saw(stale.response);
  assert.equal(stale.response.status, 412);
  assert.equal(stale.error!.errno, 'ESTALE');

  // the journal of child1, newest first
  const history = await api.GET('/api/v1/history', { params: { query: { path: '/02-simple-children/child1' } } });
  v.saw(history.response);
  assert.equal(history.response.status, 200);
  const stores = history.data!.entries.filter((e) => e.op === 'store').map((e) => e.value);
  assert.deepEqual(stores, ['43', '42']);

  // export, remove, import: the tree comes back
  const exported = await api.GET('/api/v1/export', { params: { query: { path: '/02-simple-children' } } });
  v.saw(exported.response);
  assert.equal(exported.response.status, 200);
  const doc: ExportDocument = exported.data!;
  const rm = await api.DELETE('/api/v1/config/{path}', { params: at('02-simple-children/child1') });
  v.saw(rm.response);
  assert.equal(rm.response.status, 204);
  const dry = await api.POST('/api/v1/import', { params: { query: { dry_run: 1 } }, body: doc });
  v.saw(dry.response);
  assert.equal(dry.response.status, 200, JSON.stringify(dry.error));
  assert.equal(dry.data!.changed, true); // would change: the plan has steps
  assert.deepEqual(dry.data!.ops.map((o) => o.op), ['mkdir', 'store']);
  const imported = await api.POST('/api/v1/import', { params: { query: { mode: 'merge' } }, body: doc });
  v.saw(imported.response);
  assert.equal(imported.data!.changed, true);
  const back = await api.GET('/api/v1/value/{path}', { params: at('02-simple-children/child1/storeme') });
  v.saw(back.response);
  assert.equal(back.data!.value, '43');

  // rm the link, rmdir the item
  for (const p of ['usb_gadget/g1/configs/c.1/ncm.usb0', '02-simple-children/child1']) {
    const del = await api.DELETE('/api/v1/config/{path}', { params: at(p) });
    v.saw(del.response);
    assert.equal(del.response.status, 204, JSON.stringify(del.error));
  }
  const none = await api.GET('/api/v1/node/{path}', { params: at('02-simple-children/child1') });
  v.saw(none.response);
  assert.equal(none.response.status, 404);
  assert.equal(none.error!.errno, 'ENOENT');
}
