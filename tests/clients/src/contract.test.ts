// SPDX-License-Identifier: MIT
// contract.test.ts - the flows of both clients through Prism's validating
// proxy (--errors): every request and every response must match
// api/openapi.yaml, with no violation at all. And the check can fail: with
// one response schema broken on purpose, the same flow is stopped by the
// proxy at the first response of that shape.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { heyApiFlow } from './flow-hey-api.js';
import { openapiFetchFlow } from './flow-openapi-fetch.js';
import { specFile, startConfigfsd, startPrism, Violations } from './harness.js';

async function throughPrism(spec: string, flow: typeof openapiFetchFlow): Promise<{ v: Violations; err?: unknown }> {
  const server = await startConfigfsd();
  try {
    const prism = await startPrism(spec, server.url);
    try {
      const v = new Violations();
      try {
        await flow(prism.url, v);
      } catch (err) {
        return { v, err };
      }
      return { v };
    } finally {
      await prism.stop();
    }
  } finally {
    await server.stop();
  }
}

for (const [name, flow] of [
  ['openapi-typescript + openapi-fetch', openapiFetchFlow],
  ['@hey-api/openapi-ts', heyApiFlow],
] as const) {
  test(`${name}: the flow through Prism has no violation`, async () => {
    const { v, err } = await throughPrism(specFile(), flow);
    assert.deepEqual(v.found, []);
    assert.equal(err, undefined);
  });
}

test('a broken response schema is caught by the proxy', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cfs-broken-spec-'));
  try {
    // AttributeResource now requires a member the server never sends
    const good = readFileSync(specFile(), 'utf8');
    const line = '      required: [name, path, kind, mode, readable, writable, binary, revision]\n';
    assert.equal(good.split(line).length, 2, 'AttributeResource is where this test expects it');
    const broken = join(dir, 'openapi.yaml');
    writeFileSync(broken, good.replace(line, line.replace('revision]', 'revision, broken]')));
    const { v, err } = await throughPrism(broken, openapiFetchFlow);
    assert.ok(err, 'the flow went through a spec the server does not meet');
    assert.ok(v.found.some((f) => f.includes("required property 'broken'")), v.found.join('\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
