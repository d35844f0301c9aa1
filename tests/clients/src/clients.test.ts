// SPDX-License-Identifier: MIT
// clients.test.ts - each generated client (six generators) runs the whole
// flow against its own live configfsd.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { heyApiFlow } from './flow-hey-api.js';
import { codegenFlow, orvalAxiosFlow, orvalFetchFlow, staFlow } from './flow-more.js';
import { openapiFetchFlow } from './flow-openapi-fetch.js';
import { startConfigfsd, Violations } from './harness.js';

for (const [name, flow] of [
  ['openapi-typescript + openapi-fetch', openapiFetchFlow],
  ['@hey-api/openapi-ts', heyApiFlow],
] as const) {
  test(`${name}: the whole flow against configfsd`, async () => {
    const server = await startConfigfsd();
    try {
      const v = new Violations();
      await flow(server.url, v);
      assert.deepEqual(v.found, []); // no proxy here: nothing to say
    } finally {
      await server.stop();
    }
  });
}

for (const [name, flow] of [
  ['orval (fetch)', orvalFetchFlow],
  ['orval (axios)', orvalAxiosFlow],
  ['openapi-typescript-codegen', codegenFlow],
  ['swagger-typescript-api', staFlow],
] as const) {
  test(`${name}: the whole flow against configfsd`, async () => {
    const server = await startConfigfsd();
    try {
      await flow(server.url);
    } finally {
      await server.stop();
    }
  });
}
