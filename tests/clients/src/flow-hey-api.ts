// SPDX-License-Identifier: MIT
// flow-hey-api.ts - the same flow through the SDK @hey-api/openapi-ts
// generated (its fetch client): no interceptor, no custom serializer, only
// a client made for the server's base URL. Every answer is shown to @v.
import assert from 'node:assert/strict';
import { createClient, createConfig } from '../gen/hey-api/client/index.js';
import {
  batch, exportTree, getLink, getNode, getRoot, getValue, history_, importTree, mkdir,
  putLink, putValue, rename, rmdirOrUnlink,
} from '../gen/hey-api/sdk.gen.js';
import type { ExportDocument, Problem } from '../gen/hey-api/types.gen.js';
import { b64, unb64, type Violations } from './harness.js';

export async function heyApiFlow(baseUrl: string, v: Violations): Promise<void> {
  const client = createClient(createConfig({ baseUrl }));
  const at = (path: string) => ({ client, path: { path } });

  const root = await getRoot({ client });
  v.saw(root.response);
  assert.equal(root.response.status, 200);
  assert.ok(root.data!.children.some((c) => c.name === 'blob'));

  for (const [parent, name] of [
    ['02-simple-children', 'child1'],
    ['usb_gadget', 'g1'],
    ['usb_gadget/g1/functions', 'ncm.usb0'],
    ['usb_gadget/g1/configs', 'c.1'],
  ]) {
    const made = await mkdir({ ...at(parent), body: { name } });
    v.saw(made.response);
    assert.equal(made.response.status, 201, JSON.stringify(made.error));
    assert.equal(made.data!.path, `/${parent}/${name}`);
  }
  const disk = await mkdir({
    ...at('fakenbd/pending'),
    body: { name: 'disk1', attributes: { target: '10.0.0.1', device: '/dev/sda' } },
  });
  v.saw(disk.response);
  assert.equal(disk.response.status, 201, JSON.stringify(disk.error));

  const stored = await putValue({ ...at('02-simple-children/child1/storeme'), body: { value: '42' } });
  v.saw(stored.response);
  assert.equal(stored.response.status, 200, JSON.stringify(stored.error));
  const etag42 = stored.response.headers.get('etag')!;
  const read = await getValue(at('02-simple-children/child1/storeme'));
  v.saw(read.response);
  const value: string | undefined = read.data!.value;
  assert.equal(value, '42');

  const bytes = new Uint8Array([0x00, 0xfe, 0x7f, 0x80]);
  const bin = await putValue({ ...at('blob/data'), body: { value: b64(bytes), encoding: 'base64' } });
  v.saw(bin.response);
  assert.equal(bin.response.status, 200, JSON.stringify(bin.error));
  const binRead = await getValue(at('blob/data'));
  v.saw(binRead.response);
  assert.equal(binRead.data!.encoding, 'base64');
  assert.deepEqual(unb64(binRead.data!.value!), bytes);

  const node = await getNode({ ...at('02-simple-children/child1'), query: { values: 1 } });
  v.saw(node.response);
  assert.equal(node.data!.attributes[0]!.value, '42');

  const link = await putLink({
    ...at('usb_gadget/g1/configs/c.1/ncm.usb0'),
    body: { target: '/usb_gadget/g1/functions/ncm.usb0' },
  });
  v.saw(link.response);
  assert.equal(link.response.status, 201, JSON.stringify(link.error));
  const readlink = await getLink(at('usb_gadget/g1/configs/c.1/ncm.usb0'));
  v.saw(readlink.response);
  assert.equal(readlink.data!.target, '/usb_gadget/g1/functions/ncm.usb0');

  const commit = await rename({ client, body: { from: '/fakenbd/pending/disk1', to: '/fakenbd/live/disk1' } });
  v.saw(commit.response);
  assert.equal(commit.data!.path, '/fakenbd/live/disk1');

  const failed = await batch({
    client,
    body: {
      ops: [
        { op: 'mkdir', path: '/02-simple-children/b1' },
        { op: 'symlink', path: '/02-simple-children/b1/l', target: '/usb_gadget/g1/functions/ncm.usb0' },
      ],
    },
  });
  v.saw(failed.response);
  assert.equal(failed.response.status, 403);
  const problem: Problem = failed.error!;
  assert.equal(problem.op_index, 1);
  assert.equal(problem.errno, 'EPERM');
  assert.equal((await getNode(at('02-simple-children/b1'))).response.status, 404);

  const newer = await putValue({ ...at('02-simple-children/child1/storeme'), body: { value: 43 } });
  v.saw(newer.response);
  const stale = await putValue({
    ...at('02-simple-children/child1/storeme'),
    headers: { 'If-Match': etag42 },
    body: { value: '44' },
  });
  v.saw(stale.response);
  assert.equal(stale.response.status, 412);
  assert.equal(stale.error!.errno, 'ESTALE');

  const journal = await history_({ client, query: { path: '/02-simple-children/child1', limit: 10 } });
  v.saw(journal.response);
  assert.deepEqual(journal.data!.entries.filter((e) => e.op === 'store').map((e) => e.value), ['43', '42']);

  const exported = await exportTree({ client });
  v.saw(exported.response);
  const doc: ExportDocument = exported.data!;
  const rm = await rmdirOrUnlink(at('02-simple-children/child1'));
  v.saw(rm.response);
  assert.equal(rm.response.status, 204);
  const imported = await importTree({ client, query: { mode: 'merge' }, body: doc });
  v.saw(imported.response);
  assert.equal(imported.response.status, 200, JSON.stringify(imported.error));
  assert.equal(imported.data!.changed, true);
  assert.equal((await getValue(at('02-simple-children/child1/storeme'))).data!.value, '43');

  for (const p of ['usb_gadget/g1/configs/c.1/ncm.usb0', '02-simple-children/child1']) {
    const del = await rmdirOrUnlink(at(p));
    v.saw(del.response);
    assert.equal(del.response.status, 204, JSON.stringify(del.error));
  }
  const none = await getNode(at('02-simple-children/child1'));
  v.saw(none.response);
  assert.equal(none.response.status, 404);
}
