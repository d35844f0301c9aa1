#!/usr/bin/env node
// SPDX-License-Identifier: MIT
//
// validate-responses.mjs - check what the server really answered against
// api/openapi.yaml. Each integration test binary given with --run is run
// with CFS_RESPONSE_LOG pointing at a fresh file, in which the test harness
// (tests/integration/harness.c) writes one JSON line per exchange; each
// logged response is then matched to its operation (path template and
// method; HEAD has operations of its own) and status in the spec, and:
//   - its content type must be one the spec lists for that status;
//   - a JSON body (application/json, application/problem+json) must validate
//     against the response schema, with ajv (JSON Schema 2020-12, the
//     dialect of OpenAPI 3.1) and ajv-formats;
//   - a text/event-stream body's event data must validate against the
//     schema its media type names in x-event-data;
//   - a status the spec does not list for the operation, a body where the
//     spec lists none, or a required header missing or malformed is an
//     error.
// Responses with no JSON body are checked for their content type only.
// Requests to paths or methods the spec does not list must be answered as
// info.description says: 404, or 405 with Allow, or 413, as Problem JSON
// (or, with tokens, 401 or 403 before any of these).
//
// usage: validate-responses.mjs [--spec FILE] [--run EXE]... [LOG.jsonl]...
//                               [--expect-mismatch LOG.jsonl]...
// Prints TAP (one test point per binary or log file); exits 1 on any
// mismatch, 77 when the node packages are not installed. A log given with
// --expect-mismatch holds known-bad responses, each of which must be
// refused: it keeps the validator itself honest.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const toolsRequire = createRequire(join(root, 'tools/node/package.json'));
let Ajv2020, addFormats, YAML;
try {
  Ajv2020 = toolsRequire('ajv/dist/2020').default;
  addFormats = toolsRequire('ajv-formats').default;
  YAML = toolsRequire('yaml');
} catch (e) {
  console.log(`1..0 # SKIP tools/node is not installed (scripts/node-tools.sh): ${e.message}`);
  process.exit(77);
}

// ---- arguments -------------------------------------------------------------

let specFile = join(root, 'api/openapi.yaml');
const runs = [];
const logs = [];
const badLogs = [];
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--spec') specFile = process.argv[++i];
  else if (a === '--run') runs.push(process.argv[++i]);
  else if (a === '--expect-mismatch') badLogs.push(process.argv[++i]);
  else logs.push(a);
}
if (!runs.length && !logs.length && !badLogs.length) {
  console.error('usage: validate-responses.mjs [--spec FILE] [--run EXE]... [LOG.jsonl]... [--expect-mismatch LOG.jsonl]...');
  process.exit(2);
}

// ---- the spec --------------------------------------------------------------

const spec = YAML.parse(readFileSync(specFile, 'utf8'));
const SPEC_ID = 'urn:configfsd:openapi';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

// Resolve an OpenAPI (not JSON Schema) $ref such as
// '#/components/responses/NotFound' to the object it names.
function deref(obj) {
  let seen = 0;
  while (obj && typeof obj === 'object' && typeof obj.$ref === 'string') {
    if (!obj.$ref.startsWith('#/') || ++seen > 16) throw new Error(`cannot follow ${obj.$ref}`);
    obj = obj.$ref
      .slice(2)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((o, k) => (o === undefined ? undefined : o[k]), spec);
    if (obj === undefined) throw new Error('dangling $ref');
  }
  return obj;
}

// Schema $refs point into components/schemas; make them absolute so that a
// schema taken out of the document still resolves them.
function absolutize(node) {
  if (Array.isArray(node)) return node.map(absolutize);
  if (node && typeof node === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) {
        out[k] = `${SPEC_ID}#/$defs/${v.slice('#/components/schemas/'.length)}`;
      } else {
        out[k] = absolutize(v);
      }
    }
    return out;
  }
  return node;
}

const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
addFormats(ajv);
ajv.addSchema({ $id: SPEC_ID, $defs: absolutize(spec.components?.schemas ?? {}) });
const compiled = new Map();
function validator(schema, key) {
  if (!compiled.has(key)) compiled.set(key, ajv.compile(absolutize(schema)));
  return compiled.get(key);
}
const problemSchema = { $ref: '#/components/schemas/Problem' };

// Compile every schema of the spec now, so that one ajv cannot read (strict
// mode: unknown keywords, type mismatches) fails at once, not when some
// test happens to reach it.
for (const name of Object.keys(spec.components?.schemas ?? {})) {
  validator({ $ref: `#/components/schemas/${name}` }, `components ${name}`);
}
for (const [template, item] of Object.entries(spec.paths)) {
  for (const m of METHODS) {
    for (const [code, r0] of Object.entries(item[m]?.responses ?? {})) {
      for (const [mt, media] of Object.entries(deref(r0).content ?? {})) {
        if (media.schema) validator(media.schema, `${m} ${template} ${code} ${mt}`);
      }
    }
  }
}

// Path templates, literal ones first (OpenAPI: concrete paths win).
const routes = Object.entries(spec.paths)
  .map(([template, item]) => {
    const params = [...(item.parameters ?? [])].map(deref);
    let re = '';
    for (const part of template.split(/(\{[^}]+\})/)) {
      const m = /^\{(.+)\}$/.exec(part);
      if (!m) {
        re += part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        continue;
      }
      const p = params.find((x) => x.in === 'path' && x.name === m[1]) ??
        Object.values(item)
          .filter((op) => op && op.parameters)
          .flatMap((op) => op.parameters.map(deref))
          .find((x) => x.in === 'path' && x.name === m[1]);
      re += p && p['x-multi-segment'] ? '(.+)' : '([^/]+)';
    }
    return { template, item, re: new RegExp(`^${re}$`), literal: !template.includes('{') };
  })
  .sort((a, b) => Number(b.literal) - Number(a.literal));

// Spellings the server answers like a listed path (info.description).
const ALIASES = { '/api/v1/config': '/api/v1/config/' };

function route(urlPath) {
  const p = ALIASES[urlPath] ?? urlPath;
  return routes.find((r) => r.re.test(p));
}

// ---- checking one exchange ---------------------------------------------------

const mediaType = (ct) => (ct ?? '').split(';')[0].trim().toLowerCase();
const isJson = (mt) => mt === 'application/json' || mt.endsWith('+json');

function schemaErrors(validate, data, what = '(body)') {
  if (validate(data)) return [];
  return validate.errors.slice(0, 8).map((e) => {
    const extra = e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : '';
    return `${e.instancePath || what} ${e.message}${extra} [${e.schemaPath}]`;
  });
}

function checkHeaders(resp, headers, where, errs) {
  for (const [name, h0] of Object.entries(resp.headers ?? {})) {
    const h = deref(h0);
    const v = headers[name.toLowerCase()];
    if (v === undefined) {
      if (h.required) errs.push(`header ${name} is required and missing`);
      continue;
    }
    if (h.schema) {
      for (const e of schemaErrors(validator(h.schema, `${where} header ${name}`), v, 'value')) {
        errs.push(`header ${name}: ${JSON.stringify(v)}: ${e}`);
      }
    }
  }
}

function sseEvents(body) {
  const events = [];
  let data = [];
  let event = 'message';
  for (const line of body.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (data.length) events.push({ event, data: data.join('\n') });
      data = [];
      event = 'message';
    } else if (line.startsWith(':')) {
      continue;
    } else {
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
    }
  }
  return events;
}

function checkBody(rec, resp, where, errs) {
  const headOnly = rec.method === 'HEAD';
  const mt = mediaType(rec.headers['content-type']);
  const content = resp.content ?? {};
  const types = Object.keys(content);
  if (!types.length) {
    if (rec.body_bytes > 0 && !headOnly) errs.push(`a body of ${rec.body_bytes} bytes where the spec has none`);
    return;
  }
  if (!mt) {
    if (rec.body_bytes > 0 || headOnly) errs.push(`no Content-Type; the spec lists ${types.join(', ')}`);
    return;
  }
  const key = types.find((t) => t === mt) ??
    types.find((t) => t.endsWith('/*') && mt.startsWith(t.slice(0, -1))) ??
    types.find((t) => t === '*/*');
  if (!key) {
    errs.push(`Content-Type ${mt} is not among ${types.join(', ')}`);
    return;
  }
  if (headOnly) return;
  const media = content[key];
  if (isJson(mt)) {
    if (rec.body === null) {
      errs.push('a JSON body that is not UTF-8');
      return;
    }
    let data;
    try {
      data = JSON.parse(rec.body);
    } catch (e) {
      errs.push(`the body is not JSON: ${e.message}`);
      return;
    }
    if (media.schema) {
      for (const e of schemaErrors(validator(media.schema, `${where} ${key}`), data)) errs.push(e);
    }
  } else if (mt === 'text/event-stream' && media['x-event-data'] && rec.body !== null) {
    const v = validator(media['x-event-data'], `${where} ${key} x-event-data`);
    for (const ev of sseEvents(rec.body)) {
      let data;
      try {
        data = JSON.parse(ev.data);
      } catch (e) {
        errs.push(`event ${ev.event}: data is not JSON: ${e.message}`);
        continue;
      }
      for (const e of schemaErrors(v, data)) errs.push(`event ${ev.event}: ${e}`);
    }
  }
}

// Answers every path can get, outside its operations (info.description).
// A method on a templated path may find nothing there first: 404.
function checkGeneric(rec, why, errs, templated = false) {
  const allowed = (why === 'path' || templated ? [404, 405, 413] : [405, 413]).concat([401, 403]);
  if (!allowed.includes(rec.status)) {
    errs.push(`${why === 'path' ? 'a path' : 'a method'} the spec does not list was answered ${rec.status}, not ${allowed.join('/')}`);
    return;
  }
  const fake = {
    headers: rec.status === 405 ? { Allow: { $ref: '#/components/headers/Allow' } }
      : rec.status === 401 || rec.status === 403 ? { 'WWW-Authenticate': { $ref: '#/components/headers/WWWAuthenticate' } }
        : {},
    content: { 'application/problem+json': { schema: problemSchema } },
  };
  checkHeaders(fake, rec.headers, `generic ${rec.status}`, errs);
  checkBody(rec, fake, `generic ${rec.status}`, errs);
}

const exercised = new Set();
let checkingBad = false;

function check(rec) {
  const errs = [];
  const urlPath = rec.path.split('?')[0];
  const r = route(urlPath);
  let label = `${rec.method} ${urlPath} -> ${rec.status}`;
  if (!r) {
    checkGeneric(rec, 'path', errs);
    return { label: `${label} (no such path in the spec)`, errs };
  }
  const method = rec.method.toLowerCase();
  const op = r.item[method];
  label = `${rec.method} ${r.template} -> ${rec.status} (${rec.path})`;
  if (!op) {
    checkGeneric(rec, 'method', errs, r.template.includes('{'));
    return { label, errs };
  }
  const responses = op.responses ?? {};
  const code = String(rec.status);
  const r0 = responses[code] ?? responses[`${code[0]}XX`] ?? responses.default;
  if (!r0 && rec.status === 413) {
    checkGeneric(rec, 'method', errs); // a body over the limit, on any route
    return { label, errs };
  }
  if (!r0) {
    errs.push(`status ${code} is not listed for ${METHODS.includes(method) ? method.toUpperCase() : method} ${r.template} (listed: ${Object.keys(responses).join(', ')})`);
    return { label, errs };
  }
  if (!checkingBad) exercised.add(`${rec.method} ${r.template} ${code}`);
  const resp = deref(r0);
  const where = `${method} ${r.template} ${code}`;
  checkHeaders(resp, rec.headers, where, errs);
  checkBody(rec, resp, where, errs);
  return { label, errs };
}

// ---- running ------------------------------------------------------------------

const sets = [];
let tmp = null;
for (const exe of runs) {
  tmp ??= mkdtempSync(join(tmpdir(), 'cfs-responses-'));
  const log = join(tmp, `${basename(exe)}.jsonl`);
  const res = spawnSync(exe, [], {
    env: { ...process.env, CFS_RESPONSE_LOG: log, CMOCKA_MESSAGE_OUTPUT: 'TAP' },
    encoding: 'utf8',
    timeout: 600_000,
  });
  sets.push({ name: basename(exe), log, run: res });
}
for (const log of logs) sets.push({ name: basename(log), log, run: null });
for (const log of badLogs) sets.push({ name: basename(log), log, run: null, bad: true });

console.log(`1..${sets.length}`);
let failed = 0;
let n = 0;
let total = 0;
for (const set of sets) {
  const problems = [];
  if (set.run && (set.run.status !== 0 || set.run.error)) {
    problems.push(`${set.name} itself failed (exit ${set.run.status}${set.run.error ? `, ${set.run.error.message}` : ''}); its own test reports why:`);
    for (const l of `${set.run.stdout}${set.run.stderr}`.split('\n').slice(-30)) problems.push(`  ${l}`);
  }
  const lines = existsSync(set.log) ? readFileSync(set.log, 'utf8').split('\n').filter(Boolean) : [];
  if (!lines.length) problems.push(`no response was logged in ${set.log}`);
  if (set.bad) {
    checkingBad = true;
    for (const [i, line] of lines.entries()) {
      const rec = JSON.parse(line);
      const { label, errs } = check(rec);
      if (!errs.length) problems.push(`line ${i + 1} (${rec.test}) was accepted: ${label}`);
      else console.log(`# refused as it should be, line ${i + 1} (${rec.test}): ${errs[0]}`);
    }
    n++;
    if (problems.length) {
      failed++;
      console.log(`not ok ${n} - ${set.name}: the validator accepted known-bad responses`);
      for (const p of problems) console.log(`# ${p}`);
    } else {
      console.log(`ok ${n} - ${set.name}: the validator refuses all ${lines.length} known-bad responses`);
    }
    checkingBad = false;
    continue;
  }
  for (const [i, line] of lines.entries()) {
    let rec;
    try {
      rec = JSON.parse(line);
    } catch (e) {
      problems.push(`line ${i + 1}: not JSON: ${e.message}`);
      continue;
    }
    const { label, errs } = check(rec);
    if (errs.length) {
      problems.push(`${label}:`);
      for (const e of errs) problems.push(`  ${e}`);
      const shown = rec.body === null ? `(${rec.body_bytes} bytes, not UTF-8)` : rec.body;
      problems.push(`  body: ${shown.length > 600 ? `${shown.slice(0, 600)}...` : shown}`);
    }
  }
  total += lines.length;
  n++;
  if (problems.length) {
    failed++;
    console.log(`not ok ${n} - ${set.name}: responses do not match ${basename(specFile)}`);
    for (const p of problems) console.log(`# ${p}`);
  } else {
    console.log(`ok ${n} - ${set.name}: ${lines.length} responses match ${basename(specFile)}`);
  }
}

// What the spec lists and no test asked for: information, not failure.
const listed = [];
for (const { template, item } of routes) {
  for (const m of METHODS) {
    if (!item[m]) continue;
    for (const code of Object.keys(item[m].responses ?? {})) listed.push(`${m.toUpperCase()} ${template} ${code}`);
  }
}
const missing = listed.filter((k) => !exercised.has(k));
console.log(`# ${total} responses checked; ${listed.length - missing.length} of ${listed.length} listed responses exercised`);
if (process.env.CFS_VALIDATE_VERBOSE) for (const k of missing) console.log(`#   not exercised: ${k}`);
if (tmp) rmSync(tmp, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
