// SPDX-License-Identifier: MIT
// panel.js - the selected node: its attributes as a form (schema-driven
// when the subsystem has a schema) whose edits are staged and applied
// together as one batch, its children and links, and the operations on
// it: mkdir with initial attributes (one batch), delete of the whole
// subtree (its plan shown, then one batch), symlink through the link
// picker, unlink, guided commit/uncommit (rename between pending/ and
// live/), and its history with "restore this value".

import { api, ApiError } from './api.js';
import { h, uid, replaceChildren, parentPath, baseName, joinPath, isUnder } from './dom.js';
import { schemaOf, propsOf, childTypeOf, makeControl, validate, ruleText, displayValue, summaryOf } from './schema.js';
import { kindLabel } from './tree.js';
import { deleteOps, batchOps, planList, planSummary, isPartial, BATCH_MAX } from './plan.js';
import { linkPicker, candidatesOf } from './picker.js';

const NAME_BAD = /[/\x00-\x1f\x7f]/;
const CHILD_PAGE = 100;

function nameProblem(name) {
  if (name === '') return 'a name is required';
  if (name === '.' || name === '..') return 'the name cannot be . or ..';
  if (NAME_BAD.test(name)) return 'the name cannot hold / or control characters';
  if (new TextEncoder().encode(name).length > 255) return 'the name is at most 255 bytes';
  return null;
}

function decodeValue(a) {
  if (a.value === undefined) return '';
  return a.value;
}

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** "3 min ago" for an ISO time; the exact local time goes in a title. */
export function relativeTime(iso, now = Date.now()) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  if (s < 10) return 'just now';
  if (s < 60) return `${s} s ago`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const hr = Math.round(m / 60);
  if (hr < 24) return `${hr} h ago`;
  const d = Math.round(hr / 24);
  if (d === 1) return 'yesterday';
  if (d < 30) return `${d} days ago`;
  return new Date(t).toISOString().slice(0, 10);
}

export class Panel {
  /**
   * @param {HTMLElement} el  the panel section
   * @param {object} ctx  tree, notify {error(e, opts), ok(text, opts), clear()},
   *   confirm(text, okLabel, opts) -> Promise<boolean>, navigate(path),
   *   subsystems() -> GET /api/v1's answer, denyWrite(path) -> why the
   *   token may not change @path (null: it may), online() -> the server
   *   answers
   */
  constructor(el, ctx) {
    this.el = el;
    this.ctx = ctx;
    this.path = null;
    this.seq = 0;
    this.rows = new Map();
  }

  /** Why the token may not change @path, or null. */
  deny(path) {
    return this.ctx.denyWrite ? this.ctx.denyWrite(path) : null;
  }

  /** The server stopped or started answering: Apply waits for it. */
  reachabilityChanged() {
    this.renderStaged();
  }

  // ---- the landing page ---------------------------------------------------

  async welcome() {
    const seq = ++this.seq;
    this.path = null;
    this.node = null;
    this.rows = new Map();
    const info = this.ctx.subsystems ? this.ctx.subsystems() : { subsystems: [], described: [] };
    const described = info.described || [];
    const samples = (info.subsystems || []).filter((s) => !described.includes(s));
    const go = (p, text) => h('button', { type: 'button', class: 'linkish', onclick: () => this.ctx.navigate(p) }, text || p);
    const descList = h('ul', {});
    for (const s of described) {
      const li = h('li', { dataset: { subsystem: s } }, go(`/${s}`, s));
      descList.append(li);
      schemaOf(s).then((d) => {
        if (d && d.description) li.append(h('span', { class: 'desc' }, d.description));
      }).catch(() => {});
    }
    if (seq !== this.seq) return;
    replaceChildren(
      this.el,
      h('div', { class: 'landing' },
        h('h2', { id: 'panel-title', tabindex: '-1' }, 'The configuration tree'),
        h('p', {}, 'configfsd keeps a configfs tree: each ', h('strong', {}, 'subsystem'), ' on the left holds ', h('strong', {}, 'groups'),
          ' and ', h('strong', {}, 'items'), ' you make (mkdir); an item has ', h('strong', {}, 'attributes'), ' (its values) and may have ',
          h('strong', {}, 'links'), ' to other items. In a committable subsystem an item is prepared in ', h('code', {}, 'pending/'),
          ' and brought up by committing it into ', h('code', {}, 'live/'), '. Every change is kept, with its history, and followed live.'),
        h('p', {}, 'Choose a node in the tree (arrow keys move, Enter opens, Right and Left expand and collapse; the filter above the tree narrows it). Edits are staged and applied together.'),
        described.length ? h('section', { class: 'card', 'aria-labelledby': 'land-desc' }, h('h3', { id: 'land-desc' }, 'Described subsystems'), h('p', { class: 'muted' }, 'Their forms come from a schema: kinds, limits and rules are checked as you type.'), descList) : null,
        samples.length ? h('section', { class: 'card', 'aria-labelledby': 'land-samples' }, h('h3', { id: 'land-samples' }, 'Samples written in C'),
          h('p', { class: 'muted' }, 'The samples of the kernel\u2019s configfs documentation; they have no schema, so values are plain text checked by the subsystem.'),
          h('ul', {}, samples.map((s) => h('li', {}, go(`/${s}`, s))))) : null,
      ),
    );
  }

  /** Show @path (a group, item or link). */
  async show(path) {
    const seq = ++this.seq;
    this.path = path;
    let r;
    try {
      r = await api.node(path, { limit: String(CHILD_PAGE), used_by: '1' });
    } catch (e) {
      if (seq !== this.seq) return;
      if (e instanceof ApiError && e.status === 404) {
        this.ctx.notify.error(e);
        this.welcome();
        return;
      }
      throw e;
    }
    if (seq !== this.seq) return;
    if (r.data.kind === 'link') {
      this.renderLink(r.data);
      return;
    }
    const subsystem = path.split('/').filter(Boolean)[0];
    let desc = null;
    try {
      desc = await schemaOf(subsystem);
    } catch (e) {
      this.ctx.notify.error(e);
    }
    let parentNode = null;
    let grandNode = null;
    const parent = parentPath(path);
    if (parent !== '/' && (r.data.creates || r.data.default_group || ['pending', 'live'].includes(baseName(parent)))) {
      try {
        parentNode = (await api.node(parent, { values: '0', depth: '0' })).data;
        const gp = parentPath(parent);
        if (gp !== '/' && parentNode.default_group) grandNode = (await api.node(gp, { values: '0' })).data;
      } catch {
        /* only refines the form */
      }
    }
    if (seq !== this.seq) return;
    this.render(r.data, r.etag, desc, parentNode, grandNode);
  }

  /** Show the same node again, reading everything anew. */
  reload() {
    if (this.path) return this.show(this.path).catch((e) => this.ctx.notify.error(e));
    return Promise.resolve();
  }

  focusTitle() {
    const t = this.el.querySelector('#panel-title');
    if (t) t.focus();
  }

  /** How many edits are staged (0 when none). */
  staged() {
    let n = 0;
    for (const r of this.rows.values()) if (r.dirty) n += 1;
    return n;
  }

  /** Drop the staged edits (the node is gone, or the user said so). */
  discard() {
    for (const r of this.rows.values()) if (r.dirty) this.revert(r);
  }

  crumbs(path) {
    const ol = h('ol', {});
    ol.append(h('li', {}, h('a', { href: '#/' }, 'tree')));
    let cur = '';
    const names = path.split('/').filter(Boolean);
    names.forEach((n, i) => {
      cur += `/${n}`;
      const last = i === names.length - 1;
      ol.append(h('li', {}, h('a', { href: `#${encodeURI(cur)}`, title: cur, 'aria-current': last ? 'page' : null }, n)));
    });
    return h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, ol);
  }

  // ---- a link -------------------------------------------------------------

  renderLink(link) {
    this.node = link;
    this.rows = new Map();
    this.etag = link.revision;
    const go = h('button', { type: 'button', onclick: () => this.ctx.navigate(link.target) }, 'Go to target');
    const denied = this.deny(link.path);
    const del = h('button', { type: 'button', class: 'danger', disabled: Boolean(denied), 'aria-describedby': denied ? 'access-reason' : null, onclick: () => this.unlink(link.path) }, 'Remove link…');
    replaceChildren(
      this.el,
      this.crumbs(link.path),
      h('h2', { id: 'panel-title', tabindex: '-1', title: link.name }, link.name),
      h('p', { class: 'node-path' }, h('code', {}, link.path), ' ', h('span', { class: 'badge kind-link' }, 'link')),
      h('dl', { class: 'facts' }, h('dt', {}, 'Target'), h('dd', {}, h('code', { class: 'link-target-value' }, link.target))),
      h('div', { class: 'toolbar' }, go, del),
      denied ? h('p', { class: 'hint access-note', id: 'access-reason' }, denied) : null,
    );
  }

  // ---- a group or item ----------------------------------------------------

  render(node, etag, desc, parentNode, grandNode) {
    this.node = node;
    this.etag = etag ?? node.revision;
    this.desc = desc;
    this.props = propsOf(desc, node.type);
    this.rows = new Map();
    const schemaType = desc && desc.types[node.type];
    const commitInfo = this.commitInfo(node, parentNode, grandNode);
    this.commit = commitInfo;
    this.required = [];
    this.denied = this.deny(node.path);
    if (commitInfo && commitInfo.verb === 'commit' && desc && grandNode) {
      const gt = desc.types[grandNode.type];
      if (gt && gt.committable && gt.committable.commit) this.required = gt.committable.commit.required || [];
    }

    const badges = [h('span', { class: `badge kind-${kindLabel(node).replace(' ', '-')}` }, kindLabel(node))];
    if (node.type) badges.push(h('span', { class: 'badge' }, `type ${node.type}`));
    if (node.committable) badges.push(h('span', { class: 'badge' }, 'committable'));
    if (node.live) badges.push(h('span', { class: 'badge live' }, 'live'));

    const tools = h('div', { class: 'toolbar', role: 'toolbar', 'aria-label': 'Node actions' });
    tools.append(h('button', { type: 'button', onclick: () => this.reload() }, 'Refresh'));
    tools.append(h('button', { type: 'button', 'aria-expanded': 'false', 'aria-controls': 'history', onclick: (e) => this.toggleHistory(e.currentTarget) }, 'History'));
    this.commitBtn = null;
    this.commitReason = null;
    if (commitInfo) {
      const isCommit = commitInfo.verb === 'commit';
      this.commitReason = h('span', { class: 'reason', id: 'commit-reason', 'aria-live': 'polite' });
      this.commitBtn = h('button', { type: 'button', class: isCommit ? 'primary' : '', 'aria-describedby': this.denied ? 'commit-reason access-reason' : 'commit-reason', onclick: () => this.rename(node.path, commitInfo.to, commitInfo.verb) }, isCommit ? 'Commit…' : 'Uncommit…');
      tools.append(this.commitBtn);
    }
    // a live item cannot be removed (EPERM, configfs C6): uncommit it first
    const live = commitInfo && commitInfo.verb === 'uncommit';
    const deletable = (node.kind === 'item' || node.kind === 'group') && !node.default_group && !live;
    if (deletable) tools.append(h('button', { type: 'button', class: 'danger', disabled: Boolean(this.denied), 'aria-describedby': this.denied ? 'access-reason' : null, onclick: () => this.rmdir() }, 'Delete…'));
    if (this.commitReason) tools.append(this.commitReason);
    if (live) tools.append(h('span', { class: 'hint' }, 'Uncommit to delete.'));

    const sections = [];
    sections.push(this.attributesSection(node));
    this.stagedEl = h('section', { id: 'staged', class: 'staged', 'aria-labelledby': 'staged-h', hidden: true });
    this.stagedParts = null;
    sections.push(this.stagedEl);
    this.childrenEl = h('section', { 'aria-labelledby': 'children-h', class: 'card' });
    sections.push(this.childrenEl);
    this.renderChildren(node);
    // a token that may not write here is not offered the forms
    if (node.creates && !this.denied) sections.push(this.mkdirSection(node, desc, parentNode));
    // without a schema only the subsystem knows (allow_link): offer the form
    const linksAllowed = desc ? Boolean(schemaType && schemaType.links) : true;
    if (linksAllowed && node.kind !== 'root' && !this.denied) sections.push(this.symlinkSection(node, schemaType, desc));
    this.historyEl = h('section', { id: 'history', class: 'card', 'aria-labelledby': 'history-h', hidden: true });
    sections.push(this.historyEl);

    // pending/ and live/ are the committable group's own folders, not types
    const typeless = schemaType === undefined && desc && !node.default_group;
    replaceChildren(
      this.el,
      this.crumbs(node.path),
      h('h2', { id: 'panel-title', tabindex: '-1', title: node.name || '/' }, node.name || '/'),
      h('p', { class: 'node-path' }, h('code', {}, node.path), ' ', badges),
      typeless ? h('p', { class: 'muted' }, 'This type is not in the schema.') : null,
      desc && desc.description && node.kind === 'subsystem' ? h('p', { class: 'muted' }, desc.description) : null,
      node.default_group && ['pending', 'live'].includes(node.name) && parentNode && parentNode.committable
        ? h('p', { class: 'muted' }, node.name === 'pending' ? 'Items are made and configured here, then committed into live/.' : 'Committed items: the subsystem has brought them up. Uncommit one to change or delete it.')
        : null,
      tools,
      this.denied ? h('p', { class: 'hint access-note', id: 'access-reason' }, this.denied) : null,
      sections,
    );
    this.updateCommit();
  }

  /** {verb, to} when @node is an item in pending/ or live/ of a committable group. */
  commitInfo(node, parentNode, grandNode) {
    if (node.kind !== 'item' && node.kind !== 'group') return null;
    if (!parentNode || !grandNode || !parentNode.default_group || !grandNode.committable) return null;
    const where = parentNode.name;
    if (where === 'pending') return { verb: 'commit', to: joinPath(joinPath(grandNode.path, 'live'), node.name) };
    if (where === 'live') return { verb: 'uncommit', to: joinPath(joinPath(grandNode.path, 'pending'), node.name) };
    return null;
  }

  /** Commit is enabled only once the required values are set and nothing
   * is staged; the reason says what is missing. */
  updateCommit() {
    if (!this.commitBtn) return;
    let reason = '';
    if (this.denied) reason = this.commit.verb === 'commit' ? 'Your token cannot commit here.' : 'Your token cannot uncommit here.';
    else if (this.staged()) reason = 'Apply or discard the staged changes first.';
    else if (this.commit.verb === 'commit') {
      const missing = this.required.filter((n) => {
        const r = this.rows.get(n);
        return r && r.attr.readable && r.value === '';
      });
      if (missing.length) reason = `Set ${missing.join(' and ')} first (required before commit).`;
    }
    this.commitBtn.disabled = Boolean(reason);
    this.commitReason.textContent = reason;
  }

  attributesSection(node) {
    const sec = h('section', { class: 'card', 'aria-labelledby': 'attrs-h' }, h('h3', { id: 'attrs-h' }, 'Attributes'));
    if (!node.attributes.length) {
      sec.append(h('p', { class: 'muted' }, 'No attributes.'));
      return sec;
    }
    if (!this.props) {
      sec.append(h('p', { class: 'muted' }, this.desc === null ? 'No schema for this subsystem: values are plain text, checked by the subsystem itself.' : ''));
    } else {
      sec.append(h('p', { class: 'hint' }, 'Edits are staged: they are applied together, as one change, with Apply below.', this.required.length ? ' Attributes marked ' : null, this.required.length ? h('span', { class: 'badge req' }, 'required') : null, this.required.length ? ' must be set before Commit.' : null));
    }
    const list = h('div', { class: 'attr-list' });
    for (const a of node.attributes) list.append(this.attrRow(a));
    sec.append(list);
    return sec;
  }

  attrRow(a) {
    const prop = this.props ? this.props[a.name] || null : null;
    const id = uid('attr');
    const hintId = `${id}-hint`;
    const errId = `${id}-err`;
    const value = a.readable ? displayValue(prop, decodeValue(a)) : '';
    const row = { name: a.name, attr: a, prop, revision: a.revision, value, dirty: false };
    const access = a.readable && a.writable ? 'read-write' : a.readable ? 'read-only' : a.writable ? 'write-only' : 'no access';
    const hint = [access, `mode ${a.mode}`];
    const rule = ruleText(prop);
    if (rule) hint.push(rule);
    if (a.binary) hint.push('binary');
    if (a.encoding === 'base64') hint.push('shown as base64');
    const required = this.required.includes(a.name);

    let ctl;
    const canWrite = a.writable && !a.binary && !this.denied;
    if (a.writable && this.denied) hint.push('read-only for your token');
    if (canWrite) {
      ctl = makeControl(a.name, prop, value, {
        id,
        describedBy: `${hintId} ${errId}`,
        placeholder: a.readable ? undefined : 'write-only: the value cannot be read',
      });
      if (required) ctl.control.setAttribute('aria-required', 'true');
    } else {
      const input = h('input', { id, type: 'text', value: a.readable ? value : '', readOnly: true, 'aria-describedby': hintId, class: 'readonly', placeholder: a.readable ? '' : 'not readable', title: a.readable ? value : null });
      ctl = { control: input, read: () => input.value };
    }
    row.read = ctl.read;
    row.control = ctl.control;
    row.errEl = h('p', { id: errId, class: 'field-error', hidden: true });
    row.noteEl = h('p', { class: 'field-note', hidden: true, 'aria-live': 'polite' });
    const editable = canWrite;
    const revert = editable ? h('button', { type: 'button', class: 'quiet small revert', hidden: true, 'aria-label': `Revert ${a.name}`, onclick: () => this.revert(row) }, 'Revert') : null;
    row.revertBtn = revert;
    row.form = h(
      'form',
      { class: `attr-row ${access}`, dataset: { attr: a.name }, novalidate: true, onsubmit: (e) => {
        e.preventDefault();
        if (this.staged()) this.applyStaged();
      } },
      h('label', { for: id, class: 'attr-name', title: a.name }, a.name, required ? ' ' : null, required ? h('span', { class: 'badge req', title: 'required before commit' }, 'required') : null),
      h('div', { class: 'attr-input' }, ctl.control, revert),
      h('p', { id: hintId, class: 'hint' }, hint.join(' · ')),
      row.errEl,
      row.noteEl,
    );
    const mark = () => {
      row.dirty = row.read() !== row.value || (!a.readable && row.read() !== '');
      row.form.classList.toggle('dirty', row.dirty);
      if (revert) revert.hidden = !row.dirty;
      if (!row.dirty) this.clearFieldError(row);
      this.renderStaged();
    };
    row.mark = mark;
    // checked as you type and when leaving the field, with the server's words
    // (leaving the field only adds a message: the server's refusal of the
    // value still there stays until the value changes)
    const check = (e) => {
      if (!row.dirty) return;
      const bad = validate(a.name, prop, row.read());
      if (bad) this.fieldError(row, bad);
      else if (e.type === 'input') this.clearFieldError(row);
    };
    ctl.control.addEventListener('input', mark);
    ctl.control.addEventListener('change', mark);
    if (editable) {
      ctl.control.addEventListener('input', check);
      ctl.control.addEventListener('blur', check);
    }
    this.rows.set(a.name, row);
    return row.form;
  }

  fieldError(row, text) {
    row.errEl.textContent = text;
    row.errEl.hidden = false;
    row.control.setAttribute('aria-invalid', 'true');
  }

  clearFieldError(row) {
    row.errEl.textContent = '';
    row.errEl.hidden = true;
    row.control.removeAttribute('aria-invalid');
  }

  setRowValue(row, value, revision) {
    row.value = value;
    row.revision = revision;
    row.pendingRevision = undefined;
    row.dirty = false;
    row.form.classList.remove('dirty');
    if (row.revertBtn) row.revertBtn.hidden = true;
    row.noteEl.hidden = true;
    if (row.control.tagName === 'SELECT' && ![...row.control.options].some((o) => o.value === value)) {
      row.control.append(h('option', { value }, value));
    }
    row.control.value = row.attr.readable ? value : '';
    this.clearFieldError(row);
  }

  revert(row) {
    const rev = row.pendingRevision ?? row.revision;
    row.pendingRevision = undefined;
    this.setRowValue(row, row.value, rev);
    this.renderStaged();
  }

  // ---- staged edits -------------------------------------------------------

  /** The staged bar: the diff of every staged value, Apply and Discard.
   * Built once per node; only its diff and labels change (a rebuilt
   * button would lose a click that blurred a field: the blur stages). */
  renderStaged() {
    if (!this.stagedEl) return;
    const dirty = [...this.rows.values()].filter((r) => r.dirty);
    this.updateCommit();
    document.body.dataset.staged = String(dirty.length);
    if (!this.stagedParts) {
      const p = {
        title: h('h3', { id: 'staged-h' }),
        diff: h('ul', { class: 'diff', 'aria-label': 'Staged changes' }),
        apply: h('button', { type: 'button', class: 'primary apply', 'aria-describedby': 'apply-wait', onclick: () => this.applyStaged() }),
        discard: h('button', { type: 'button', class: 'discard', onclick: () => this.discard() }, 'Discard'),
        wait: h('span', { class: 'reason', id: 'apply-wait', 'aria-live': 'polite' }),
      };
      replaceChildren(this.stagedEl, p.title, p.diff,
        h('p', { class: 'hint' }, 'Applied as one change (one revision), only if nobody else changed these values since you loaded them.'),
        h('div', { class: 'toolbar' }, p.apply, p.discard, p.wait));
      this.stagedParts = p;
    }
    const p = this.stagedParts;
    this.stagedEl.hidden = !dirty.length;
    // while the server does not answer, Apply waits (nothing is lost)
    const offline = this.ctx.online && !this.ctx.online();
    if (!this.applying) p.apply.disabled = offline;
    p.wait.textContent = offline ? 'Waiting for the server to answer again; the staged changes are kept.' : '';
    p.title.textContent = plural(dirty.length, 'staged change');
    p.apply.textContent = `Apply ${plural(dirty.length, 'change')}`;
    replaceChildren(p.diff, dirty.map((r) => h('li', { dataset: { attr: r.name } }, h('span', { class: 'attr-name' }, r.name), ': ',
      r.attr.readable ? [h('del', {}, r.value === '' ? '(empty)' : r.value), ' → '] : null,
      h('ins', {}, r.read() === '' ? '(empty)' : r.read()))));
  }

  /**
   * Apply the staged values as one batch. The batch is conditional on the
   * global revision (if_revision): the page reads it, then checks that
   * none of the staged attributes changed since it showed them (else a
   * conflict, nothing sent), then sends the batch; a 412 means something
   * changed in between, and the check runs again (at most 3 times).
   */
  async applyStaged() {
    try {
      await this.applyStagedNow();
    } catch (e) {
      // no answer, or one nobody expected: say so at Apply, keep the values
      this.ctx.notify.error(e, { lead: 'Nothing was applied; the staged changes are kept.', anchor: this.stagedParts && this.stagedParts.apply });
    }
  }

  async applyStagedNow() {
    const rows = [...this.rows.values()].filter((r) => r.dirty);
    if (!rows.length) return;
    let firstBad = null;
    for (const r of rows) {
      const bad = validate(r.name, r.prop, r.read());
      if (bad) {
        this.fieldError(r, bad);
        firstBad = firstBad || r;
      } else {
        this.clearFieldError(r);
      }
    }
    if (firstBad) {
      firstBad.control.focus();
      return;
    }
    const path = this.node.path;
    const ops = rows.map((r) => ({ op: 'store', path: joinPath(path, r.name), value: r.read() }));
    const btn = this.stagedEl.querySelector('.apply');
    if (btn) btn.disabled = true;
    this.applying = true;
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const info = await api.info();
        const now = await api.node(path, { values: '0', depth: '0' });
        const conflicts = rows.filter((r) => {
          const a = now.data.attributes.find((x) => x.name === r.name);
          return !a || a.revision !== r.revision;
        });
        if (conflicts.length) {
          for (const r of conflicts) {
            this.fieldError(r, `${r.name} was changed by someone else after it was loaded; your value is kept here but was not applied.`);
            this.fetchTheirs(r);
          }
          this.ctx.notify.error(new ApiError(412, { title: 'Precondition Failed', status: 412, errno: 'ESTALE', detail: `${conflicts.map((r) => joinPath(path, r.name)).join(', ')} changed since this page loaded ${conflicts.length === 1 ? 'it' : 'them'}` }), {
            lead: 'Conflict: nothing was applied.',
            anchor: this.stagedParts && this.stagedParts.apply,
            actions: [{ label: 'Reload the values', run: () => Promise.all(conflicts.map((r) => this.reloadAttr(r))) }],
          });
          conflicts[0].control.focus();
          return;
        }
        try {
          const r = await api.batch(ops, info.data.revision);
          for (const row of rows) {
            const v = row.attr.readable ? row.read() : '';
            this.setRowValue(row, v, r.data.revision);
          }
          if (r.data.revision > this.etag) this.etag = r.data.revision;
          this.renderStaged();
          // the server may normalise a value (0x10 -> 16): show its form
          for (const row of rows) if (row.attr.readable) this.reloadAttr(row, { focus: false }).catch(() => {});
          this.ctx.notify.ok(`Applied ${plural(rows.length, 'change')} to ${path} (revision ${r.data.revision}).`, { anchor: rows[rows.length - 1].control.closest('form') || this.el.querySelector('#attrs-h') });
          return;
        } catch (e) {
          if (e instanceof ApiError && e.status === 412) continue;
          if (e instanceof ApiError && e.status === 0) throw e;
          const i = e instanceof ApiError ? e.problem.op_index : undefined;
          const bad = i !== undefined && rows[i] ? rows[i] : rows.length === 1 ? rows[0] : null;
          if (bad && e instanceof ApiError && e.problem.detail) {
            this.fieldError(bad, e.problem.detail);
            bad.control.focus();
          }
          this.ctx.notify.error(e, { lead: bad ? `${bad.name} was refused; nothing was applied.` : 'Nothing was applied.', anchor: this.stagedParts && this.stagedParts.apply });
          return;
        }
      }
      this.ctx.notify.error(new ApiError(412, { title: 'Precondition Failed', status: 412, errno: 'ESTALE', detail: 'the tree kept changing while applying; nothing was applied' }), { actions: [{ label: 'Try again', run: () => this.applyStaged() }] });
    } finally {
      this.applying = false;
      const b = this.stagedEl.querySelector('.apply');
      if (b) b.disabled = Boolean(this.ctx.online && !this.ctx.online());
    }
  }

  /** After a conflict: let Revert show the other writer's value. */
  async fetchTheirs(row) {
    if (!row.attr.readable) return;
    try {
      const r = await api.attribute(joinPath(this.node.path, row.name));
      row.value = displayValue(row.prop, decodeValue(r.data));
      row.pendingRevision = r.data.revision;
      row.noteEl.textContent = `Now on the server: ${row.value === '' ? '(empty)' : row.value}. Revert takes it.`;
      row.noteEl.hidden = false;
      this.renderStaged();
    } catch {
      /* Revert shows what we have */
    }
  }

  async reloadAttr(row, { focus = true } = {}) {
    const path = joinPath(this.node.path, row.name);
    if (!row.attr.readable) {
      // a write-only value cannot be read: take the new revision from the node
      const r = await api.node(this.node.path, { values: '0', depth: '0' });
      const a = r.data.attributes.find((x) => x.name === row.name);
      if (a) this.setRowValue(row, '', a.revision);
      this.renderStaged();
      return;
    }
    const r = await api.attribute(path);
    if (row.dirty && !focus) return;
    this.setRowValue(row, displayValue(row.prop, decodeValue(r.data)), r.data.revision);
    this.renderStaged();
    if (focus) row.control.focus();
  }

  /** A store happened at @path (an attribute of this node) in @revision. */
  async attributeChanged(name, revision) {
    const row = this.rows && this.rows.get(name);
    if (!row) return;
    if (revision > this.etag) this.etag = revision;
    if (revision <= row.revision) return;
    if (row.dirty) {
      row.noteEl.textContent = 'Changed on the server since you started editing: Apply will report a conflict, Revert shows the new value.';
      row.noteEl.hidden = false;
      if (row.attr.readable) {
        try {
          const r = await api.attribute(joinPath(this.node.path, name));
          row.value = displayValue(row.prop, decodeValue(r.data));
          row.pendingRevision = r.data.revision;
        } catch {
          /* Revert shows what we have */
        }
      }
      return;
    }
    if (!row.attr.readable) {
      row.revision = revision;
      return;
    }
    try {
      const r = await api.attribute(joinPath(this.node.path, name));
      if (!row.dirty) this.setRowValue(row, displayValue(row.prop, decodeValue(r.data)), r.data.revision);
      this.updateCommit();
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) this.ctx.notify.error(e);
    }
  }

  // ---- children and links -------------------------------------------------

  /** The children (a page at a time, by name), the links, and the links
   * that point here (used by), each with a jump link. */
  renderChildren(node) {
    const all = [...node.links.map((l) => ({ l })), ...node.children.map((c) => ({ c }))];
    let next = node.next_after ?? null;
    const ctotal = node.children_total ?? node.children.length;
    const total = ctotal + node.links.length;
    let offset = 0; // the children before the list (after a find)
    const list = h('ul', { class: 'child-list' }, all.map((it) => this.childItem(node, it)));
    const more = h('button', { type: 'button', class: 'small more-children' });
    const label = () => {
      const left = ctotal - offset - list.querySelectorAll(':scope > li[data-child]').length;
      more.hidden = !next || left <= 0;
      more.textContent = `Show ${Math.min(CHILD_PAGE, left)} more (${left.toLocaleString('en')} not shown)`;
    };
    more.addEventListener('click', async () => {
      try {
        const r = await api.children(node.path, { limit: CHILD_PAGE, after: next });
        for (const c of r.data.children) list.append(this.childItem(node, { c }));
        next = r.data.next_after ?? null;
        label();
      } catch (e) {
        this.ctx.notify.error(e);
      }
    });
    label();
    this.fillSummaries(node, list).catch(() => {}); // a summary is a help, not the listing
    // a group not listed whole: find a child by the start of its name
    const find = next ? this.findChild(node, (r) => {
      offset = r.children_offset ?? 0;
      list.replaceChildren(...r.children.map((c) => this.childItem(node, { c })));
      next = r.next_after ?? null;
      label();
      return list;
    }) : null;
    const usedBy = node.used_by || [];
    replaceChildren(
      this.childrenEl,
      h('h3', { id: 'children-h' }, `Children and links${total ? ` (${total.toLocaleString('en')})` : ''}`),
      find,
      total ? [list, more] : h('p', { class: 'muted' }, 'None.'),
      usedBy.length || node.kind === 'item' || node.kind === 'group'
        ? h('section', { class: 'used-by', 'aria-labelledby': 'usedby-h' },
          h('h3', { id: 'usedby-h' }, `Used by${usedBy.length ? ` (${usedBy.length})` : ''}`),
          usedBy.length
            ? h('ul', { class: 'child-list' }, usedBy.map((p) => h('li', {}, h('span', { class: 'badge kind-link' }, 'link'), ' ',
              h('button', { type: 'button', class: 'linkish', title: p, onclick: () => this.ctx.navigate(p) }, p))))
            : h('p', { class: 'muted' }, 'No link points here.'))
        : null,
    );
  }

  /** Type-to-find in a big group: as the user types, the server's page
   * from the first name at or past the text (?name_from=, a binary
   * search: nothing else is read) replaces the list (@show(answer) ->
   * the list) and the tree's rows move there too; Enter opens the first
   * child whose name starts with the text. */
  findChild(node, show) {
    const id = uid('find-child');
    const input = h('input', { id, type: 'search', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${id}-out`, placeholder: 'e.g. the first letters of a name' });
    const out = h('p', { class: 'hint', id: `${id}-out`, 'aria-live': 'polite' });
    let seq = 0;
    let timer = null;
    let hit = null;
    const run = async () => {
      const text = input.value;
      const my = ++seq;
      try {
        const r = await api.children(node.path, { limit: CHILD_PAGE, nameFrom: text });
        if (my !== seq || this.node !== node) return;
        const first = r.data.children[0] || null;
        hit = first && text && first.name.startsWith(text) ? first : null;
        const list = show(r.data);
        const li = hit ? list.querySelector(':scope > li[data-child]') : null;
        if (li) li.classList.add('found');
        const place = `${((r.data.children_offset ?? 0) + 1).toLocaleString('en')} of ${r.data.children_total.toLocaleString('en')}`;
        if (!text) out.textContent = '';
        else if (hit) out.textContent = `${hit.name} is child ${place}: Enter opens it.`;
        else if (first) out.textContent = `No name starts with “${text}”; the list goes on from ${first.name} (${place}).`;
        else out.textContent = `No name sorts at or after “${text}”.`;
        await this.ctx.tree.seekIn(node.path, text);
      } catch (e) {
        if (my === seq) this.ctx.notify.error(e, { anchor: input });
      }
    };
    input.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(run, 200);
    });
    return h('form', {
      class: 'find-child',
      role: 'search',
      'aria-label': 'Find a child',
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        clearTimeout(timer);
        await run();
        if (hit) await this.ctx.navigate(hit.path);
      },
    }, h('label', { for: id }, 'Find a child by the start of its name'), ' ', input, out);
  }

  childItem(node, { c, l }) {
    if (c) {
      return h('li', { dataset: { child: c.name } }, h('button', { type: 'button', class: 'linkish', title: c.path, onclick: () => this.ctx.navigate(c.path) }, c.name), ' ', h('span', { class: 'badge' }, kindLabel(c)));
    }
    const lp = joinPath(node.path, l.name);
    return h(
      'li',
      { class: 'link-row', dataset: { link: l.name } },
      h('span', { class: 'link-name', title: l.name }, l.name),
      ' ',
      h('span', { class: 'badge kind-link' }, 'link'),
      ' → ',
      h('button', { type: 'button', class: 'linkish', title: l.target, 'aria-label': `Go to ${l.target}`, onclick: () => this.ctx.navigate(l.target) }, l.target),
      ' ',
      this.deny(lp) ? null : h('button', { type: 'button', class: 'danger small', 'aria-label': `Remove link ${l.name}`, onclick: () => this.unlink(lp) }, 'Remove'),
    );
  }

  /** The one-line summary the schema gives each child's type (its
   * "summary" template), after the child's name: one read of the children
   * with their values and links (depth 1). */
  async fillSummaries(node, list) {
    const types = this.desc ? this.desc.types : null;
    // a listing names no child's type: ask when the schema has a summary
    if (!types || !node.children.length || !Object.values(types).some((t) => t.summary)) return;
    const r = await api.node(node.path, { depth: '1', limit: String(CHILD_PAGE) });
    if (this.node !== node) return;
    for (const c of r.data.children) {
      const t = c.type && types[c.type];
      const li = [...list.children].find((x) => x.dataset.child === c.name);
      if (!t || !t.summary || !li || li.querySelector('.summary')) continue;
      const text = summaryOf(t.summary, c, propsOf(this.desc, c.type));
      li.append(' ', h('span', { class: 'summary', title: text }, text));
    }
  }

  /** The children or links of the shown node changed: list them again. */
  async structureChanged() {
    if (!this.node || this.node.kind === 'link' || !this.childrenEl) return;
    const path = this.node.path;
    try {
      const r = await api.node(path, { values: '0', limit: String(CHILD_PAGE), used_by: '1' });
      if (this.path !== path || !this.node) return;
      this.node.children = r.data.children;
      this.node.links = r.data.links;
      this.node.children_total = r.data.children_total;
      this.node.next_after = r.data.next_after;
      this.node.used_by = r.data.used_by;
      this.etag = r.etag ?? r.data.revision;
      this.renderChildren(this.node);
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) this.ctx.notify.error(e);
    }
  }

  mkdirSection(node, desc, parentNode) {
    const childType = childTypeOf(desc, node, parentNode);
    const props = propsOf(desc, childType);
    const nameId = uid('name');
    const nameErr = h('p', { class: 'field-error', id: `${nameId}-err`, hidden: true });
    const hints = nameHints(desc, childType);
    const nameHint = h('p', { class: 'hint', id: `${nameId}-hint` }, hints.text);
    const nameInput = h('input', { id: nameId, type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${nameId}-hint ${nameId}-err`, placeholder: hints.examples.length ? `e.g. ${hints.examples[0]}` : null });
    const fields = [];
    const fieldset = h('div', { class: 'attr-list' });
    if (props) {
      for (const [name, prop] of Object.entries(props)) {
        if (prop.readOnly || (parseInt(prop['x-mode'] || '0644', 8) & 0o222) === 0) continue;
        const id = uid('new');
        const initial = prop.default === undefined ? '' : displayValue(prop, prop.default === true ? '1' : prop.default === false ? '0' : String(prop.default));
        const ctl = makeControl(name, prop, initial, { id, describedBy: `${id}-hint ${id}-err` });
        const err = h('p', { class: 'field-error', id: `${id}-err`, hidden: true });
        fields.push({ name, prop, initial, ctl, err });
        fieldset.append(
          h('div', { class: 'attr-row' }, h('label', { for: id, class: 'attr-name' }, name), h('div', { class: 'attr-input' }, ctl.control), h('p', { class: 'hint', id: `${id}-hint` }, ruleText(prop)), err),
        );
      }
    }
    const what = node.creates === 'group' ? 'group' : 'item';
    const submit = h('button', { type: 'submit', class: 'primary' }, `Create ${what}`);
    // a numbered name (lun_N, tpgt_N): the next free one is suggested
    const free = nextFreeName(hints.pattern, node.children.map((c) => c.name), hints.examples);
    if (free) nameInput.value = free;
    /** Check the name (an empty one only when @empty), show the verdict
     * at it; the problem, or null. */
    const showName = (empty) => {
      const name = nameInput.value;
      let bad = name === '' && !empty ? null : nameProblem(name);
      if (!bad && hints.pattern) {
        try {
          if (!new RegExp(hints.pattern).test(name)) bad = `the name must match ${hints.pattern}`;
        } catch {
          /* a dialect difference: the server decides */
        }
      }
      return showAt(nameInput, nameErr, bad);
    };
    /** Check field @f (a value left as it was is not sent), show it. */
    const showField = (f) => {
      const v = f.ctl.read();
      return showAt(f.ctl.control, f.err, v === f.initial ? null : validate(f.name, f.prop, v));
    };
    // as you type, and when leaving (which keeps the server's words)
    const live = (input, show) => (e) => {
      if (e.type !== 'blur' || input.getAttribute('aria-invalid') !== 'true') show();
    };
    for (const ev of ['input', 'blur']) {
      nameInput.addEventListener(ev, live(nameInput, () => showName(false)));
      for (const f of fields) f.ctl.control.addEventListener(ev, live(f.ctl.control, () => showField(f)));
    }
    const form = h(
      'form',
      {
        class: 'mkdir-form',
        novalidate: true,
        onsubmit: async (e) => {
          e.preventDefault();
          const name = nameInput.value;
          let bad = showName(true);
          const attrs = {};
          let firstBad = bad ? nameInput : null;
          for (const f of fields) {
            const v = f.ctl.read();
            const msg = showField(f);
            if (msg) {
              firstBad = firstBad || f.ctl.control;
              bad = bad || msg;
            }
            if (v !== f.initial) attrs[f.name] = v;
          }
          if (bad) {
            firstBad.focus();
            return;
          }
          submit.disabled = true;
          try {
            await api.mkdir(node.path, name, attrs);
            await this.ctx.tree.changed(node.path);
            await this.ctx.navigate(joinPath(node.path, name));
            this.ctx.notify.ok(`Created ${joinPath(node.path, name)}.`, { anchor: this.titleEl() });
          } catch (err) {
            const i = err instanceof ApiError ? err.problem.op_index : undefined;
            const keys = Object.keys(attrs);
            // op 0 is the mkdir, then one store per attribute in order
            const f = i > 0 ? fields.find((x) => x.name === keys[i - 1]) : null;
            if (f && err.problem.detail) {
              f.err.hidden = false;
              f.err.textContent = err.problem.detail;
              f.ctl.control.setAttribute('aria-invalid', 'true');
            } else if (err instanceof ApiError && err.problem.detail && (i === 0 || err.status === 409 || err.status === 400)) {
              nameErr.hidden = false;
              nameErr.textContent = err.problem.detail;
              nameInput.setAttribute('aria-invalid', 'true');
            }
            this.ctx.notify.error(err);
          } finally {
            submit.disabled = false;
          }
        },
      },
      h('div', { class: 'attr-row' }, h('label', { for: nameId, class: 'attr-name' }, 'Name'), h('div', { class: 'attr-input' }, nameInput), nameHint, nameErr),
      fields.length
        ? h('details', { class: 'initial', open: true }, h('summary', {}, `Initial attributes of the new ${childType} (optional; stored with the ${what} as one change)`), fieldset)
        : null,
      h('div', { class: 'toolbar' }, submit),
    );
    return h('section', { class: 'card', 'aria-labelledby': 'mkdir-h' }, h('h3', { id: 'mkdir-h' }, `New ${what}${childType ? ` (${childType})` : ''}`), form);
  }

  symlinkSection(node, schemaType, desc) {
    const tId = uid('target');
    const nId = uid('lname');
    const allowTypes = schemaType && schemaType.links ? schemaType.links.allow : null;
    const subsystem = node.path.split('/').filter(Boolean)[0];
    // the types that make an allowed target (a LUN's storage objects are
    // made in an HBA group): the picker offers to create one there
    const makers = allowTypes && desc ? Object.entries(desc.types).filter(([, t]) => t.creates && allowTypes.includes(t.creates.type)).map(([tn]) => tn) : [];
    const err = h('p', { class: 'field-error', hidden: true, id: `${tId}-err` });
    const picker = linkPicker({
      id: tId,
      describedBy: `${tId}-hint`,
      what: allowTypes ? allowTypes.join(' or ') : null,
      load: () => (allowTypes && desc ? candidatesOf(subsystem, desc, allowTypes) : this.ctx.tree.knownNodes().filter((p) => !isUnder(p, node.path))),
      makers: makers.length ? async () => nearestFirst(await candidatesOf(subsystem, desc, makers), node.path) : null,
      nameOk: (n) => !nameProblem(n),
      onCreate: async (dir, name) => {
        const ok = await this.createAndLink(node, dir, name, (x) => {
          err.hidden = false;
          err.textContent = x.problem && x.problem.detail ? x.problem.detail : String(x.message || x);
          target.setAttribute('aria-invalid', 'true');
        });
        if (ok) {
          target.value = '';
          err.hidden = true;
          target.removeAttribute('aria-invalid');
        }
        return ok;
      },
    });
    const target = picker.input;
    const lname = h('input', { id: nId, type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'the target\u2019s name', 'aria-describedby': `${nId}-hint` });
    const allow = allowTypes
      ? `Pick a ${allowTypes.join(' or ')}: type part of its name or path${makers.length ? `, or a new name to create one and link it` : ''}.`
      : 'Type part of a loaded node\u2019s path, or an absolute path; the subsystem decides which targets it accepts.';
    const form = h(
      'form',
      {
        class: 'symlink-form',
        novalidate: true,
        onsubmit: async (e) => {
          e.preventDefault();
          const res = await picker.resolve(target.value);
          const t = res.path;
          const name = lname.value || (t ? baseName(t) : '');
          const bad = res.error || nameProblem(name);
          err.hidden = !bad;
          err.textContent = bad || '';
          if (bad) {
            target.setAttribute('aria-invalid', 'true');
            target.focus();
            return;
          }
          target.removeAttribute('aria-invalid');
          try {
            await api.symlink(joinPath(node.path, name), t);
            target.value = '';
            lname.value = '';
            await this.ctx.tree.changed(node.path);
            await this.ctx.tree.reveal(joinPath(node.path, name), { focus: false, select: false });
            await this.structureChanged();
            this.ctx.notify.ok(`Linked ${joinPath(node.path, name)} → ${t}.`, { anchor: this.el.querySelector('#symlink-h') || this.titleEl() });
          } catch (x) {
            if (x instanceof ApiError && x.problem.detail) {
              err.hidden = false;
              err.textContent = x.problem.detail;
            }
            this.ctx.notify.error(x);
          }
        },
      },
      h('div', { class: 'attr-row' }, h('label', { for: tId, class: 'attr-name' }, 'Target'), h('div', { class: 'attr-input' }, picker.root), h('p', { class: 'hint', id: `${tId}-hint` }, allow), err),
      h('div', { class: 'attr-row' }, h('label', { for: nId, class: 'attr-name' }, 'Link name'), h('div', { class: 'attr-input' }, lname), h('p', { class: 'hint', id: `${nId}-hint` }, 'optional: the target\u2019s own name')),
      h('div', { class: 'toolbar' }, h('button', { type: 'submit' }, 'Create link')),
    );
    return h('section', { class: 'card', 'aria-labelledby': 'symlink-h' }, h('h3', { id: 'symlink-h' }, 'New link'), form,
      allowTypes && desc ? this.createAndLinkForm(node, desc, subsystem, allowTypes, () => picker.reset()) : null);
  }

  /** Make @dir/@name and link it into @node under the same name, as one
   * batch; then the tree, the panel and a toast say so. On a refusal,
   * @showErr(error) puts it at the field; nothing was made. @return
   * whether it was made. */
  async createAndLink(node, dir, name, showErr) {
    const target = joinPath(dir, name);
    const link = joinPath(node.path, name);
    try {
      await api.batch([{ op: 'mkdir', path: target }, { op: 'symlink', path: link, target }]);
    } catch (x) {
      showErr(x);
      this.ctx.notify.error(x, { lead: 'Nothing was created.' });
      return false;
    }
    await this.ctx.tree.changed(dir);
    await this.ctx.tree.changed(node.path);
    await this.structureChanged();
    this.ctx.notify.ok(`Created ${target} and linked it here.`, { anchor: this.el.querySelector('#symlink-h') || this.titleEl() });
    return true;
  }

  /** "Create and link": where links.allow names types made by a group
   * (a config's functions, a LUN's storage objects), make one there and
   * link it here, as one batch. The groups are read when it is opened;
   * the one nearest this node is chosen first. */
  createAndLinkForm(node, desc, subsystem, allowTypes, changed) {
    const makers = Object.entries(desc.types).filter(([, t]) => t.creates && allowTypes.includes(t.creates.type));
    if (!makers.length) return null;
    const what = [...new Set(makers.map(([, t]) => t.creates.type))].join(' or ');
    const pId = uid('cl-parent');
    const nId = uid('cl-name');
    const parent = h('select', { id: pId });
    const name = h('input', { id: nId, type: 'text', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${nId}-hint ${nId}-err` });
    const hint = h('p', { class: 'hint', id: `${nId}-hint` });
    const err = h('p', { class: 'field-error', id: `${nId}-err`, hidden: true });
    const submit = h('button', { type: 'submit' }, 'Create and link');
    let loaded = false;
    const hintFor = () => {
      const t = makers.find(([tn]) => tn === parent.selectedOptions[0]?.dataset.type);
      const made = t ? desc.types[t[1].creates.type] : null;
      const hints = nameHints(desc, t ? t[1].creates.type : null);
      name.placeholder = hints.examples.length ? `e.g. ${hints.examples[0]}` : '';
      hint.textContent = hints.text;
      return made;
    };
    const details = h('details', { class: 'create-link' },
      h('summary', {}, `Or create a new ${what} and link it here`),
      h('form', { novalidate: true, onsubmit: async (e) => {
        e.preventDefault();
        const dir = parent.value;
        const bad = !dir ? `no group here makes a ${what}` : nameProblem(name.value);
        showAt(name, err, bad);
        if (bad) return;
        submit.disabled = true;
        const ok = await this.createAndLink(node, dir, name.value, (x) => {
          if (x instanceof ApiError && x.problem.detail) showAt(name, err, x.problem.detail);
        });
        submit.disabled = false;
        if (ok) {
          name.value = '';
          changed();
        }
      } },
      h('div', { class: 'attr-row' }, h('label', { for: pId, class: 'attr-name' }, 'In'), h('div', { class: 'attr-input' }, parent)),
      h('div', { class: 'attr-row' }, h('label', { for: nId, class: 'attr-name' }, 'Name'), h('div', { class: 'attr-input' }, name), hint, err),
      h('div', { class: 'toolbar' }, submit)));
    details.addEventListener('toggle', async () => {
      if (!details.open || loaded) return;
      loaded = true;
      try {
        const found = [];
        for (const [tn] of makers) for (const p of await candidatesOf(subsystem, desc, [tn])) found.push({ p, tn });
        const order = nearestFirst(found.map((f) => f.p), node.path);
        found.sort((a, b) => order.indexOf(a.p) - order.indexOf(b.p));
        replaceChildren(parent, found.map((f) => h('option', { value: f.p, dataset: { type: f.tn } }, f.p)));
        parent.addEventListener('change', hintFor);
        hintFor();
      } catch (x) {
        loaded = false;
        this.ctx.notify.error(x);
      }
    });
    return details;
  }

  // ---- operations on the node ---------------------------------------------

  /** Delete the node and everything under it: read the subtree, show the
   * plan (links, then children bottom-up), run it as one batch. */
  async rmdir() {
    const node = this.node;
    let ops;
    let rev;
    let partial = false;
    try {
      rev = (await api.info()).data.revision;
      const r = await api.node(node.path, { depth: '64', values: '0' });
      ops = deleteOps(r.data);
      // more than one answer holds: far more than a batch takes
      partial = isPartial(r.data);
    } catch (e) {
      this.ctx.notify.error(e);
      return;
    }
    const simple = ops.length === 1;
    // links from outside the subtree hold it (EBUSY): say so before asking
    const holders = (node.used_by || []).filter((p) => !isUnder(p, node.path));
    const held = holders.length
      ? h('div', { class: 'used-by-warning', role: 'note' },
        h('p', { class: 'field-error' }, `${plural(holders.length, 'link')} elsewhere ${holders.length === 1 ? 'points' : 'point'} at ${node.path}: configfs refuses the delete (EBUSY) until ${holders.length === 1 ? 'it is' : 'they are'} removed.`),
        h('ul', { class: 'child-list' }, holders.map((p) => h('li', {}, h('code', {}, p)))))
      : null;
    const text = simple
      ? `Delete ${node.path}? This removes the ${node.kind} (rmdir); its values are gone.`
      : `Delete ${node.path} and everything under it? ${planSummary(ops)}: ${ops.length} steps, run bottom-up as one change (all or nothing).`;
    const body = h('div', {}, held, simple ? null : planList(ops), !simple && (ops.length > BATCH_MAX || partial) ? h('p', { class: 'field-error' }, `A batch takes at most ${BATCH_MAX} operations${partial ? ' and this subtree holds more than 10,000 folders' : ''}: delete parts of the subtree first.`) : null);
    const ok = await this.ctx.confirm(text, simple ? 'Delete' : `Delete ${plural(ops.length, 'step')}`, {
      title: simple ? 'Delete?' : 'Delete this subtree?',
      body,
      setup: (b) => {
        b.disabled = ops.length > BATCH_MAX || partial;
      },
    });
    if (!ok) return;
    try {
      if (simple) await api.remove(node.path, this.etag);
      else await api.batch(batchOps(ops), rev);
      this.discard();
      await this.ctx.tree.changed(parentPath(node.path));
      await this.ctx.navigate(parentPath(node.path), { ask: false });
      this.ctx.notify.ok(simple ? `Deleted ${node.path}.` : `Deleted ${node.path} and ${plural(ops.length - 1, 'other step')}.`, { anchor: this.titleEl() });
    } catch (e) {
      const i = e instanceof ApiError ? e.problem.op_index : undefined;
      const step = i !== undefined && ops[i] ? ops[i] : null;
      let lead = 'Nothing was deleted.';
      if (e instanceof ApiError && e.status === 412) lead = `Conflict: ${node.path} changed since you loaded it; nothing was deleted.`;
      else if (step) lead = `Step ${i + 1} (${step.op} ${step.path || step.from}) was refused; nothing was deleted.`;
      this.ctx.notify.error(e, { lead, actions: e instanceof ApiError && e.status === 412 ? [{ label: 'Reload', run: () => this.reload() }] : [] });
    }
  }

  /** The panel's heading: where a message about the node as a whole goes. */
  titleEl() {
    return this.el.querySelector('#panel-title');
  }

  async unlink(path) {
    const ok = await this.ctx.confirm(`Remove the link ${path}? Its target stays.`, 'Remove link', { title: 'Remove link?' });
    if (!ok) return;
    try {
      await api.remove(path);
      await this.ctx.tree.changed(parentPath(path));
      if (this.path === path) await this.ctx.navigate(parentPath(path));
      else await this.structureChanged();
      this.ctx.notify.ok(`Removed the link ${path}.`, { anchor: this.el.querySelector('#children-h') || this.titleEl() });
    } catch (e) {
      this.ctx.notify.error(e);
    }
  }

  async rename(from, to, verb) {
    const name = baseName(from);
    const commit = verb === 'commit';
    const text = commit
      ? `Commit ${name}? It moves ${from} to ${to}: the subsystem brings it up (commit_item), and from then on it cannot be deleted until it is uncommitted.`
      : `Uncommit ${name}? This takes the live object down: the subsystem stops it (uncommit_item) and ${from} moves back to ${to}, where it can be changed or deleted.`;
    const ok = await this.ctx.confirm(text, commit ? 'Commit' : 'Uncommit', { title: commit ? 'Commit?' : 'Uncommit?', okClass: commit ? 'primary' : 'danger' });
    if (!ok) return;
    try {
      await api.rename(from, to, this.etag);
      await this.ctx.tree.changed(parentPath(from));
      await this.ctx.tree.changed(parentPath(to));
      await this.ctx.navigate(to);
      this.ctx.notify.ok(`${commit ? 'Committed' : 'Uncommitted'} ${name}: now ${to}.`, { anchor: this.titleEl() });
    } catch (e) {
      if (e instanceof ApiError && e.problem.detail && this.commitReason) this.commitReason.textContent = e.problem.detail;
      this.ctx.notify.error(e, e instanceof ApiError && e.status === 412 ? { lead: `Conflict: ${from} changed since you loaded it.`, actions: [{ label: 'Reload', run: () => this.reload() }] } : {});
    }
  }

  // ---- history ------------------------------------------------------------

  async toggleHistory(btn) {
    const open = this.historyEl.hidden;
    btn.setAttribute('aria-expanded', String(open));
    this.historyEl.hidden = !open;
    if (!open) return;
    const node = this.node;
    const table = h('table', { class: 'history' }, h('caption', {}, `Changes at and under ${node.path}, newest first`), h('thead', {}, h('tr', {}, ['When', 'Who', 'Change', 'Value'].map((t) => h('th', { scope: 'col' }, t)), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')))));
    const body = h('tbody');
    table.append(body);
    const more = h('button', { type: 'button', hidden: true }, 'Older changes');
    const heading = h('h3', { id: 'history-h', tabindex: '-1' }, 'History');
    replaceChildren(this.historyEl, heading, h('div', { class: 'table-wrap' }, table), more);
    // it opens below the fold on a long panel: bring it there, focus it
    this.historyEl.scrollIntoView({ block: 'start' });
    heading.focus({ preventScroll: true });
    let before = null;
    const load = async () => {
      try {
        const r = await api.history(node.path, before);
        for (const e of r.data.entries) body.append(this.historyRow(node, e));
        if (!body.children.length) body.append(h('tr', {}, h('td', { colspan: '5' }, 'No recorded changes.')));
        before = r.data.next_before;
        more.hidden = before === null || before === undefined;
      } catch (e) {
        this.ctx.notify.error(e);
      }
    };
    more.addEventListener('click', load);
    await load();
  }

  historyRow(node, e) {
    const trim = (s) => (typeof s === 'string' ? s.replace(/\n$/, '') : s);
    const rel = e.path && e.path.startsWith(`${node.path}/`) ? e.path.slice(node.path.length + 1) : e.path;
    let val = null;
    let action = null;
    if (e.op === 'store') {
      if (e.write_only || e.value === undefined) val = h('span', { class: 'muted' }, '(write-only)');
      else val = [e.old !== undefined ? [h('del', {}, trim(e.old) === '' ? '(empty)' : trim(e.old)), ' → '] : null, h('ins', {}, trim(e.value) === '' ? '(empty)' : trim(e.value))];
      const row = parentPath(e.path) === node.path ? this.rows.get(baseName(e.path)) : null;
      if (row && !this.denied && e.old !== undefined && !e.write_only && row.attr.writable && row.attr.readable && e.old_encoding !== 'base64') {
        // named by the value it brings back: "Restore this value" on a
        // row "A -> B" read as either
        const old = trim(e.old) === '' ? '(empty)' : trim(e.old);
        action = h('button', { type: 'button', class: 'small restore', title: `Store ${old} into ${baseName(e.path)} again`, onclick: () => this.restore(row, trim(e.old)) }, `Restore ${old.length > 24 ? `${old.slice(0, 23)}…` : old}`);
      }
    } else if (e.op === 'symlink') val = `→ ${e.target}`;
    else if (e.op === 'rename') val = `${e.from} → ${e.to}`;
    const when = h('time', { datetime: e.time, title: `${new Date(e.time).toLocaleString()} (revision ${e.revision})` }, relativeTime(e.time));
    return h('tr', { dataset: { revision: String(e.revision), op: e.op } },
      h('td', {}, when),
      h('td', {}, e.principal ?? ''),
      h('td', {}, h('span', { class: 'op' }, e.op), ' ', h('code', { title: e.path }, rel || '.')),
      h('td', { class: 'value' }, val),
      h('td', {}, action));
  }

  /** Store @value (from the history) into @row again, conditional on the
   * revision the panel shows (If-Match). */
  async restore(row, value) {
    if (row.dirty) {
      this.fieldError(row, 'Apply or revert the staged value first.');
      return;
    }
    const shown = displayValue(row.prop, value);
    if (shown === row.value) {
      this.ctx.notify.ok(`${row.name} already holds ${value}.`);
      return;
    }
    const ok = await this.ctx.confirm(`Set ${row.name} back to ${value === '' ? '(empty)' : value}? It holds ${row.value === '' ? '(empty)' : row.value} now.`, 'Restore', { title: 'Restore this value?', okClass: 'primary' });
    if (!ok) return;
    const path = joinPath(this.node.path, row.name);
    try {
      const r = await api.store(path, value, row.revision);
      const rev = r.data && r.data.revision !== undefined ? r.data.revision : r.etag ?? row.revision;
      this.setRowValue(row, r.data && r.data.value !== undefined ? displayValue(row.prop, decodeValue(r.data)) : shown, rev);
      this.updateCommit();
      this.ctx.notify.ok(`Restored ${row.name} to ${value === '' ? '(empty)' : value}.`);
      const hist = this.el.querySelector('#history');
      if (hist && !hist.hidden) {
        const btn = this.el.querySelector('button[aria-controls="history"]');
        hist.hidden = true;
        await this.toggleHistory(btn);
      }
    } catch (e) {
      if (e instanceof ApiError && e.status === 412) {
        this.fieldError(row, `${row.name} was changed by someone else after it was loaded; nothing was restored.`);
        this.ctx.notify.error(e, { lead: `Conflict: ${path} changed since you loaded it; nothing was restored.`, actions: [{ label: 'Reload the value', run: () => this.reloadAttr(row) }] });
        return;
      }
      this.ctx.notify.error(e);
    }
  }

  /** True when the panel shows @path or something under it. */
  showsUnder(path) {
    return this.path !== null && isUnder(this.path, path);
  }
}

/** Show @msg (or nothing) at @input's message @errEl and mark the input;
 * returns @msg. */
function showAt(input, errEl, msg) {
  errEl.hidden = !msg;
  errEl.textContent = msg || '';
  if (msg) input.setAttribute('aria-invalid', 'true');
  else input.removeAttribute('aria-invalid');
  return msg;
}

/** @paths, those sharing the longest start with @near first (the group
 * nearest a node), then by path. */
function nearestFirst(paths, near) {
  const b = near.split('/');
  const common = (p) => {
    let n = 0;
    const a = p.split('/');
    while (n < a.length && a[n] === b[n]) n++;
    return n;
  };
  return [...paths].sort((x, y) => common(y) - common(x) || x.localeCompare(y));
}

/** For a name pattern of the form ^PREFIX[0-9]+$ (lun_N, tpgt_N): the
 * first PREFIXN not among @taken, counting from the number of the first
 * of @examples (tpgt_1: from 1) or 0; else null. */
export function nextFreeName(pattern, taken, examples = []) {
  const m = pattern ? /^\^([A-Za-z_.-]+)\[0-9\]\+\$$/.exec(pattern) : null;
  if (!m) return null;
  const first = examples.length && examples[0].startsWith(m[1]) ? Number(examples[0].slice(m[1].length)) : 0;
  const used = new Set(taken);
  for (let n = Number.isInteger(first) ? first : 0; n < 100000; n++) if (!used.has(`${m[1]}${n}`)) return `${m[1]}${n}`;
  return null;
}

/** What the schema says about the names of objects of @childType (the
 * type a mkdir here makes): {pattern, examples, text}. */
function nameHints(desc, childType) {
  const out = { pattern: null, examples: [], text: 'Any name without / (at most 255 bytes).' };
  const t = desc && childType ? desc.types[childType] : null;
  if (!t) return out;
  out.pattern = t.name_pattern || null;
  out.examples = t.name_examples || [];
  const bits = [];
  if (out.pattern) bits.push(`The name must match ${out.pattern}.`);
  if (out.examples.length) bits.push(`For example ${out.examples.join(', ')}.`);
  if (bits.length) out.text = bits.join(' ');
  return out;
}
