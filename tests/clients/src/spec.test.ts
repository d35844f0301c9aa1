// SPDX-License-Identifier: MIT
// spec.test.ts - what the generators rely on, read from api/openapi.yaml:
// every operation but the shell forms (x-shell-form) takes at most one
// request media type and answers at most one success media type; no
// jsonSchemaDialect line (it silently turns off Prism's response
// validation); every operation that needs a token also states that none
// is needed without --tokens.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import YAML from 'yaml';
import { specFile } from './harness.js';

type Op = {
  operationId: string;
  'x-shell-form'?: boolean;
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, unknown>; $ref?: string }>;
};
const METHODS = ['get', 'head', 'put', 'post', 'delete', 'options', 'patch'] as const;

const spec = YAML.parse(readFileSync(specFile(), 'utf8'));
const ops: Op[] = Object.values(spec.paths as Record<string, Record<string, Op>>)
  .flatMap((item) => METHODS.filter((m) => item[m]).map((m) => item[m]!));

test('one request and one success media type per operation, shell forms aside', () => {
  const shell = ops.filter((op) => op['x-shell-form']).map((op) => op.operationId);
  assert.deepEqual(shell.sort(), ['readPath', 'readPathHead', 'writePath']);
  for (const op of ops.filter((o) => !o['x-shell-form'])) {
    const req = Object.keys(op.requestBody?.content ?? {});
    assert.ok(req.length <= 1, `${op.operationId} takes ${req.join(', ')}`);
    const ok = new Set(Object.entries(op.responses)
      .filter(([code]) => code.startsWith('2'))
      .flatMap(([, r]) => Object.keys(r.content ?? {})));
    assert.ok(ok.size <= 1, `${op.operationId} answers ${[...ok].join(', ')}`);
  }
});

test('no jsonSchemaDialect, and every token is optional without --tokens', () => {
  assert.equal(spec.jsonSchemaDialect, undefined);
  assert.deepEqual(spec.security, [{ bearerAuth: ['reader'] }, {}]);
  for (const op of ops) {
    const sec = op.security ?? spec.security;
    assert.ok(sec.length === 0 || sec.some((s: object) => Object.keys(s).length === 0),
      `${op.operationId} needs a token even without --tokens`);
  }
});

// What made orval, openapi-typescript-codegen and others fail to compile:
// status ranges (4XX) as response keys, one name for two components
// (a parameter and a schema both ConfigPath), a schema named as an
// operation's alias (orval's BatchResult for the operation batch), and an
// enum inline in an x- property (codegen's `enum 'x-kind'`).
test('names every generator can turn into identifiers', () => {
  for (const op of ops) {
    for (const code of Object.keys(op.responses)) {
      assert.match(code, /^([1-5]\d\d|default)$/, `${op.operationId} answers a range ${code}`);
    }
  }
  const seen = new Map<string, string>();
  for (const [section, entries] of Object.entries(spec.components as Record<string, object>)) {
    for (const name of Object.keys(entries)) {
      assert.ok(!seen.has(name), `${name} is both in ${seen.get(name)} and in ${section}`);
      seen.set(name, section);
    }
  }
  const upper = (s: string) => s[0]!.toUpperCase() + s.slice(1);
  for (const op of ops) {
    for (const suffix of ['Result', 'Params', 'Body', 'Headers', 'Response', 'Error', 'Data']) {
      const alias = upper(op.operationId) + suffix;
      assert.ok(!seen.has(alias), `${alias} is ${op.operationId}'s alias and a component`);
    }
  }
  const walk = (node: unknown, at: string): void => {
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      if (k === 'properties') {
        for (const [prop, schema] of Object.entries(v as Record<string, { enum?: unknown }>)) {
          assert.ok(!(prop.startsWith('x-') && schema.enum), `${at}.${prop}: an inline enum named from an x- property`);
        }
      }
      walk(v, `${at}.${k}`);
    }
  };
  walk(spec, '#');
});
