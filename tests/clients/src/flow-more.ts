// SPDX-License-Identifier: MIT
// flow-more.ts - the Client of flow-common.ts for four more generators,
// each a thin use of what it generated, unmodified: orval's fetch client
// (with its documented custom-fetch mutator, orval-fetch.ts, for the base
// URL) and its default axios client, openapi-typescript-codegen's fetch
// client and swagger-typescript-api's fetch client.
import axios from 'axios';
import * as orvalFetch from '../gen/orval/fetch/api.js';
import { getConfigfsd } from '../gen/orval/axios/api.js';
import {
  ApiError, ChangesService, ConfigService, OpenAPI, OperationsService, TransferService,
} from '../gen/openapi-typescript-codegen/index.js';
import { Api, type HttpResponse } from '../gen/swagger-typescript-api/api.js';
import { type Answer, type Client, commonFlow } from './flow-common.js';
import { setOrvalBaseUrl } from './orval-fetch.js';

type Problem = orvalFetch.Problem;
const batchOps = (dir: string, link: string, target: string) => ({
  ops: [{ op: 'mkdir' as const, path: dir }, { op: 'symlink' as const, path: link, target }],
});

// ---- orval, fetch: a union of { status, data, headers } per status code
type OrvalAnswer = { status: number; data: unknown; headers: Headers };
function fromOrval<R extends OrvalAnswer>(r: R): Answer<Extract<R, { status: 200 | 201 }>['data']> {
  const ok = r.status >= 200 && r.status < 300;
  return {
    status: r.status,
    data: ok ? (r.data as Extract<R, { status: 200 | 201 }>['data']) : undefined,
    problem: ok ? undefined : (r.data as Problem),
    etag: r.headers.get('etag'),
  };
}

export async function orvalFetchFlow(baseUrl: string): Promise<void> {
  setOrvalBaseUrl(baseUrl);
  const o = orvalFetch;
  const c: Client = {
    root: async () => fromOrval(await o.getRoot()),
    mkdir: async (parent, body) => fromOrval(await o.mkdir(parent, body)),
    putValue: async (path, body, ifMatch) =>
      fromOrval(await o.putValue(path, body, ifMatch ? { headers: { 'If-Match': ifMatch } } : undefined)),
    getValue: async (path) => fromOrval(await o.getValue(path)),
    getNode: async (path) => fromOrval(await o.getNode(path, { values: 1 })),
    putLink: async (path, target) => fromOrval(await o.putLink(path, { target })),
    getLink: async (path) => fromOrval(await o.getLink(path)),
    rename: async (from, to) => fromOrval(await o.rename({ from, to })),
    batchMkdirSymlink: async (d, l, t) => fromOrval(await o.batch(batchOps(d, l, t))),
    history: async (path) => fromOrval(await o.history({ path, limit: 10 })),
    exportImport: async () => {
      const ex = await o.exportTree();
      const rm = fromOrval(await o.rmdirOrUnlink('02-simple-children/child1'));
      const doc = ex.status === 200 ? ex.data : undefined;
      const imported = fromOrval(await o.importTree(doc!, { mode: 'merge' }));
      return { exported: fromOrval(ex), rm, imported };
    },
    remove: async (path) => fromOrval(await o.rmdirOrUnlink(path)),
  };
  await commonFlow(c);
}

// ---- orval, axios: AxiosResponse<T>, every status resolved (not thrown)
function fromAxios<T>(r: { status: number; data: T; headers: Record<string, unknown> }): Answer<T> {
  const ok = r.status >= 200 && r.status < 300;
  return {
    status: r.status,
    data: ok ? r.data : undefined,
    problem: ok ? undefined : (r.data as Problem),
    etag: (r.headers['etag'] as string | undefined) ?? null,
  };
}

export async function orvalAxiosFlow(baseUrl: string): Promise<void> {
  axios.defaults.baseURL = baseUrl;
  axios.defaults.validateStatus = () => true;
  const o = getConfigfsd();
  const c: Client = {
    root: async () => fromAxios(await o.getRoot()),
    mkdir: async (parent, body) => fromAxios(await o.mkdir(parent, body)),
    putValue: async (path, body, ifMatch) =>
      fromAxios(await o.putValue(path, body, ifMatch ? { headers: { 'If-Match': ifMatch } } : undefined)),
    getValue: async (path) => fromAxios(await o.getValue(path)),
    getNode: async (path) => fromAxios(await o.getNode(path, { values: 1 })),
    putLink: async (path, target) => fromAxios(await o.putLink(path, { target })),
    getLink: async (path) => fromAxios(await o.getLink(path)),
    rename: async (from, to) => fromAxios(await o.rename({ from, to })),
    batchMkdirSymlink: async (d, l, t) => fromAxios(await o.batch(batchOps(d, l, t))),
    history: async (path) => fromAxios(await o.history({ path, limit: 10 })),
    exportImport: async () => {
      const ex = await o.exportTree();
      const rm = fromAxios(await o.rmdirOrUnlink('02-simple-children/child1'));
      const imported = await o.importTree(ex.data, { mode: 'merge' });
      return { exported: fromAxios(ex), rm, imported: fromAxios(imported) };
    },
    remove: async (path) => fromAxios(await o.rmdirOrUnlink(path)),
  };
  await commonFlow(c);
}

// ---- openapi-typescript-codegen: the body, or an ApiError to catch
async function fromCodegen<T>(p: Promise<T>, etagOf?: (t: T) => string): Promise<Answer<T>> {
  try {
    const data = await p;
    return { status: 'ok', data, etag: etagOf ? etagOf(data) : null };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { status: err.status, data: undefined, problem: err.body as Problem };
  }
}

export async function codegenFlow(baseUrl: string): Promise<void> {
  OpenAPI.BASE = baseUrl;
  const C = ConfigService;
  const c: Client = {
    root: () => fromCodegen(C.getRoot()),
    mkdir: (parent, body) => fromCodegen(C.mkdir(parent, body)),
    // the ETag is the revision the answer carries (docs/API.md)
    putValue: (path, body, ifMatch) => fromCodegen(C.putValue(path, body, ifMatch), (a) => `"${a.revision}"`),
    getValue: (path) => fromCodegen(C.getValue(path)),
    getNode: (path) => fromCodegen(C.getNode(path, undefined, 1)),
    putLink: (path, target) => fromCodegen(C.putLink(path, { target })),
    getLink: (path) => fromCodegen(C.getLink(path)),
    rename: (from, to) => fromCodegen(OperationsService.rename({ from, to })),
    batchMkdirSymlink: (d, l, t) => fromCodegen(OperationsService.batch(batchOps(d, l, t))),
    history: (path) => fromCodegen(ChangesService.history(path, undefined, 10)),
    exportImport: async () => {
      const exported = await fromCodegen(TransferService.exportTree());
      const rm = await fromCodegen(C.rmdirOrUnlink('02-simple-children/child1'));
      const imported = await fromCodegen(TransferService.importTree(exported.data!, 'merge'));
      return { exported, rm, imported };
    },
    remove: (path) => fromCodegen(C.rmdirOrUnlink(path)),
  };
  await commonFlow(c);
}

// ---- swagger-typescript-api: an HttpResponse, thrown when not ok
async function fromSta<T, E>(p: Promise<HttpResponse<T, E>>): Promise<Answer<T>> {
  let r: HttpResponse<T, E>;
  try {
    r = await p;
  } catch (err) {
    r = err as HttpResponse<T, E>;
    if (!(r instanceof Response)) throw err;
  }
  return {
    status: r.status,
    data: r.ok ? r.data : undefined,
    problem: r.ok ? undefined : (r.error as Problem),
    etag: r.headers.get('etag'),
  };
}

export async function staFlow(baseUrl: string): Promise<void> {
  const a = new Api({ baseUrl }).api;
  const c: Client = {
    root: () => fromSta(a.getRoot()),
    mkdir: (parent, body) => fromSta(a.mkdir(parent, body)),
    putValue: (path, body, ifMatch) =>
      fromSta(a.putValue(path, body, ifMatch ? { headers: { 'If-Match': ifMatch } } : {})),
    getValue: (path) => fromSta(a.getValue(path)),
    getNode: (path) => fromSta(a.getNode(path, { values: 1 })),
    putLink: (path, target) => fromSta(a.putLink(path, { target })),
    getLink: (path) => fromSta(a.getLink(path)),
    rename: (from, to) => fromSta(a.rename({ from, to })),
    batchMkdirSymlink: (d, l, t) => fromSta(a.batch(batchOps(d, l, t))),
    history: (path) => fromSta(a.history({ path, limit: 10 })),
    exportImport: async () => {
      const exported = await fromSta(a.exportTree());
      const rm = await fromSta(a.rmdirOrUnlink('02-simple-children/child1'));
      const imported = await fromSta(a.importTree(exported.data!, { mode: 'merge' }));
      return { exported, rm, imported };
    },
    remove: (path) => fromSta(a.rmdirOrUnlink(path)),
  };
  await commonFlow(c);
}
