// SPDX-License-Identifier: MIT
// events.js - GET /api/v1/events, the Server-Sent Events stream of changes.
//
// The stream is read with fetch() and parsed here rather than with
// EventSource: EventSource can send no Authorization header (the events
// route needs the reader role when the server has tokens) and never shows
// the status of a refused connection, so a 401 would look like an endless
// reconnect. fetch() does both; resuming works as EventSource's does, with
// `since=` set to the last `id:` received (ids come once per revision).

import { apiUrl, authHeaders } from './api.js';

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 15000;

export class EventStream {
  /**
   * @param {object} h  onEvent(type, data), onState(state, text) with
   *   state one of 'connecting', 'live', 'retrying', 'unauthorized'.
   */
  constructor(h) {
    this.h = h;
    this.since = null;
    this.abort = null;
    this.stopped = true;
    this.retryMs = RETRY_MIN_MS;
    this.retryTimer = null;
  }

  /** Start (or restart) from revision @since: changes after it arrive. */
  start(since) {
    this.stop();
    this.since = since;
    this.stopped = false;
    this.retryMs = RETRY_MIN_MS;
    this.run();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    if (this.abort) this.abort.abort();
    this.abort = null;
  }

  /** Reconnect at once (after a new token, or by the user's request). */
  reconnect() {
    if (this.since !== null) this.start(this.since);
  }

  async run() {
    const abort = new AbortController();
    this.abort = abort;
    this.h.onState('connecting', 'connecting…');
    const q = this.since !== null ? { since: String(this.since) } : undefined;
    try {
      const res = await fetch(apiUrl('/events', q), {
        headers: { Accept: 'text/event-stream', ...authHeaders() },
        signal: abort.signal,
        cache: 'no-store',
      });
      if (res.status === 401 || res.status === 403) {
        this.h.onState('unauthorized', `not allowed (${res.status}): give a token to see live changes`);
        return; // the token dialog calls reconnect()
      }
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      this.retryMs = RETRY_MIN_MS;
      this.h.onState('live', 'live');
      await this.read(res.body.getReader());
      throw new Error('the server closed the stream');
    } catch (e) {
      if (abort.signal.aborted || this.stopped) return;
      const secs = Math.round(this.retryMs / 100) / 10;
      this.h.onState('retrying', `disconnected (${e.message}); retrying in ${secs} s`);
      this.retryTimer = setTimeout(() => this.run(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    }
  }

  async read(reader) {
    const decoder = new TextDecoder();
    let buf = '';
    let ev = { type: '', data: [], id: null };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      let m;
      while ((m = /\r\n|\r|\n/.exec(buf))) {
        // a lone '\r' at the end may be the first half of '\r\n'
        if (m[0] === '\r' && m.index === buf.length - 1) break;
        const line = buf.slice(0, m.index);
        buf = buf.slice(m.index + m[0].length);
        if (line === '') {
          if (ev.data.length) this.dispatch(ev);
          ev = { type: '', data: [], id: null };
          continue;
        }
        if (line.startsWith(':')) continue; // comment: ': connected', heartbeat
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? '' : line.slice(colon + 1);
        if (val.startsWith(' ')) val = val.slice(1);
        if (field === 'event') ev.type = val;
        else if (field === 'data') ev.data.push(val);
        else if (field === 'id') ev.id = val;
      }
    }
  }

  dispatch(ev) {
    let data;
    try {
      data = JSON.parse(ev.data.join('\n'));
    } catch {
      return;
    }
    if (ev.id !== null && /^\d+$/.test(ev.id)) this.since = Number(ev.id);
    this.h.onEvent(ev.type || 'message', data);
  }
}
