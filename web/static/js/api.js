// SPDX-License-Identifier: MIT
// api.js - the HTTP API of configfsd as the editor uses it (docs/API.md):
// config paths to URLs (each name percent-encoded on its own), the bearer
// token (sessionStorage, asked for again on a 401), errors as ApiError
// carrying the problem+json body (title, status, detail, errno), and
// whether the server answers at all (onReachable: a request that got no
// answer, then the first that got one).

const TOKEN_KEY = 'configfsd.token';
const API = '/api/v1';

/** An answer that was not 2xx; `problem` is the RFC 9457 body. */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
  }

  get errno() {
    return this.problem.errno || null;
  }
}

let tokenPrompt = null; // async () => token string, or null when the user gives up
let pendingPrompt = null; // one dialog for all the requests that got a 401
const tokenListeners = new Set();

/** The function that asks the user for a token when the server says 401. */
export function setTokenPrompt(fn) {
  tokenPrompt = fn;
}

export function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  } catch {
    return '';
  }
}

/** Keep @token for this tab (empty: forget it) and tell the listeners. */
export function setToken(token) {
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    /* storage disabled: the token lives as long as the page */
  }
  memoryToken = token || '';
  for (const fn of tokenListeners) fn(memoryToken);
}

let memoryToken = getToken();

const reachListeners = new Set();
let reachable = true;

/** @fn(up) is called when the server stops answering (false) and when it
 * answers again (true). */
export function onReachable(fn) {
  reachListeners.add(fn);
}

export function isReachable() {
  return reachable;
}

const busyListeners = new Set();
let inFlight = 0;

/** @fn(n) hears the number of requests under way, at each change. */
export function onBusy(fn) {
  busyListeners.add(fn);
}

function busy(delta) {
  inFlight += delta;
  for (const fn of busyListeners) fn(inFlight);
}

/** Say whether the server answered; listeners hear only the changes. */
export function noteReachable(up) {
  if (up === reachable) return;
  reachable = up;
  for (const fn of reachListeners) fn(up);
}

export function onTokenChange(fn) {
  tokenListeners.add(fn);
}

/** Headers every request carries. */
export function authHeaders() {
  return memoryToken ? { Authorization: `Bearer ${memoryToken}` } : {};
}

/** '/a/b c' -> '/api/v1/config/a/b%20c'; '/' -> '/api/v1/config/'. */
export function configUrl(path, query) {
  const segs = path.split('/').filter((s) => s !== '');
  let url = `${API}/config/${segs.map(encodeURIComponent).join('/')}`;
  if (query) url += `?${new URLSearchParams(query)}`;
  return url;
}

export function apiUrl(rest, query) {
  let url = `${API}${rest}`;
  if (query) url += `?${new URLSearchParams(query)}`;
  return url;
}

async function askToken() {
  if (!tokenPrompt) return null;
  if (!pendingPrompt) {
    pendingPrompt = Promise.resolve(tokenPrompt()).finally(() => {
      pendingPrompt = null;
    });
  }
  return pendingPrompt;
}

async function problemOf(res) {
  const type = res.headers.get('Content-Type') || '';
  const text = await res.text().catch(() => '');
  if (type.includes('json')) {
    try {
      const p = JSON.parse(text);
      if (p && typeof p === 'object') return p;
    } catch {
      /* fall through */
    }
  }
  return { title: res.statusText || `HTTP ${res.status}`, status: res.status, detail: text.trim() };
}

/**
 * One request. @opts: json (a body sent as JSON), text (a raw text/plain
 * body), ifMatch (a revision number or '*'), accept, signal.
 * Resolves to {status, etag (number or null), data (parsed JSON, text or
 * null), headers}; rejects with ApiError on a non-2xx answer, after asking
 * for a token and trying again on 401.
 */
export async function request(method, url, opts = {}) {
  busy(1);
  try {
    return await requestOnce(method, url, opts);
  } finally {
    busy(-1);
  }
}

async function requestOnce(method, url, opts) {
  for (;;) {
    const headers = { ...authHeaders() };
    let body;
    if (opts.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(opts.json);
    } else if (opts.text !== undefined) {
      headers['Content-Type'] = 'text/plain; charset=utf-8';
      body = opts.text;
    }
    if (opts.ifMatch !== undefined && opts.ifMatch !== null) {
      headers['If-Match'] = opts.ifMatch === '*' ? '*' : `"${opts.ifMatch}"`;
    }
    headers.Accept = opts.accept || 'application/json';
    let res;
    try {
      res = await fetch(url, { method, headers, body, signal: opts.signal, cache: 'no-store' });
    } catch (e) {
      if (e.name === 'AbortError') throw e;
      noteReachable(false);
      throw new ApiError(0, {
        title: 'Network error',
        status: 0,
        detail: `${method} ${url}: the server cannot be reached (${e.message})`,
      });
    }
    noteReachable(true);
    if (res.status === 401 && !opts.noPrompt) {
      const problem = await problemOf(res);
      const token = await askToken();
      if (token) continue;
      throw new ApiError(401, problem);
    }
    if (!res.ok) throw new ApiError(res.status, await problemOf(res));
    const tag = res.headers.get('ETag');
    const m = tag && /^"(\d+)"$/.exec(tag);
    let data = null;
    if (res.status !== 204) {
      const type = res.headers.get('Content-Type') || '';
      data = type.includes('json') ? await res.json() : await res.text();
    }
    return { status: res.status, etag: m ? Number(m[1]) : null, data, headers: res.headers };
  }
}

export const api = {
  info: () => request('GET', apiUrl('')),
  /** The token's name, role and subtrees (GET /api/v1/whoami). */
  whoami: () => request('GET', apiUrl('/whoami')),
  /** Whether the server answers: GET /healthz, which needs no token. */
  health: () => request('GET', '/healthz', { noPrompt: true }),
  node: (path, query, signal) => request('GET', configUrl(path, query), { signal }),
  /** A page of @path's children by name: from the start, or after a
   * next_after cursor, or before a prev_before cursor, or the last page
   * (end), or from the first name at or past @nameFrom (type-to-find);
   * @contains filters. The node with children_total, children_offset,
   * next_after and prev_before. */
  children: (path, { limit = 200, after = null, before = null, end = false, nameFrom = '', contains = '' } = {}) => {
    const q = { values: '0', limit: String(limit) };
    if (after) q.after = after;
    else if (before) q.before = before;
    else if (end) q.from = 'end';
    else if (nameFrom) q.name_from = nameFrom;
    if (contains) q.name_contains = contains;
    return request('GET', configUrl(path, q));
  },
  attribute: (path) => request('GET', configUrl(path), { accept: 'application/json' }),
  store: (path, value, ifMatch) => request('PUT', configUrl(path), { json: { value }, ifMatch }),
  mkdir: (dir, name, attributes, ifMatch) =>
    request('POST', configUrl(dir), {
      json: attributes && Object.keys(attributes).length ? { name, attributes } : { name },
      ifMatch,
    }),
  remove: (path, ifMatch) => request('DELETE', configUrl(path), { ifMatch }),
  symlink: (path, target, ifMatch) => request('PUT', configUrl(path), { json: { target }, ifMatch }),
  rename: (from, to, ifMatch) => request('POST', apiUrl('/rename'), { json: { from, to }, ifMatch }),
  schema: (subsystem) => request('GET', apiUrl(`/schema/${encodeURIComponent(subsystem)}`)),
  history: (path, before, limit = 50) => {
    const q = { path, limit: String(limit) };
    if (before !== null && before !== undefined) q.before = String(before);
    return request('GET', apiUrl('/history', q));
  },
  exportTree: () => request('GET', apiUrl('/export')),
  /** Several operations, all or nothing, one revision; @ifRevision is
   * compared with the global revision (412 ESTALE when it moved). */
  batch: (ops, ifRevision) => {
    const body = { ops };
    if (ifRevision !== undefined && ifRevision !== null) body.if_revision = ifRevision;
    return request('POST', apiUrl('/batch'), { json: body });
  },
  importTree: (doc, mode, dryRun, ifMatch) => {
    const q = { mode };
    if (dryRun) q.dry_run = '1';
    return request('POST', apiUrl('/import', q), { json: doc, ifMatch });
  },
};

/** 'Conflict (409 EEXIST)' from an ApiError or any error. */
export function describeError(e) {
  if (e instanceof ApiError) {
    const p = e.problem;
    // a 403 is the token's role or its subtrees, never "not found"
    const title = e.status === 403 ? (/ role\b/.test(p.detail || '') ? 'Your token\u2019s role does not allow this' : 'Outside your token\u2019s scope') : p.title;
    const head = `${title || 'Error'} (${e.status || 'no answer'}${p.errno ? ` ${p.errno}` : ''})`;
    return { head, detail: p.detail || '', errno: p.errno || '', status: e.status };
  }
  return { head: 'Error', detail: String(e && e.message ? e.message : e), errno: '', status: 0 };
}
