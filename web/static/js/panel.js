// SPDX-License-Identifier: MIT
// panel.js - the selected node: its attributes as a form (schema-driven
// when the subsystem has a schema), its children and links, and the
// operations on it: store (PUT with If-Match, so a concurrent change is a
// 412 conflict and never a lost update), mkdir with initial attributes (one
// batch), rmdir, symlink, unlink, commit/uncommit (rename between pending/
// and live/), and its history.

import { api, ApiError } from './api.js';
import { h, uid, replaceChildren, parentPath, baseName, joinPath, isUnder } from './dom.js';
import { schemaOf, propsOf, childTypeOf, makeControl, validate, ruleText } from './schema.js';
import { kindLabel } from './tree.js';

const NAME_BAD = /[/\x00-\x1f\x7f]/;

function nameProblem(name) {
  if (name === '') return 'a name is required';
  if (name === '.' || name === '..') return 'the name cannot be . or ..';
  if (NAME_BAD.test(name)) return 'the name cannot hold / or control characters';
  if (new TextEncoder().encode(name).length > 255) return 'the name is at most 255 bytes';
  return null;
}

function decodeValue(a) {
  if (a.value === undefined) return '';
  if (a.encoding === 'base64') return a.value;
  return a.value;
}

export class Panel {
  /**
   * @param {HTMLElement} el  the panel section
   * @param {object} ctx  tree, notify {error(e, opts), ok(text)},
   *   confirm(text, okLabel) -> Promise<boolean>, navigate(path)
   */
  constructor(el, ctx) {
    this.el = el;
    this.ctx = ctx;
    this.path = null;
    this.seq = 0;
    this.welcome();
  }

  welcome() {
    this.path = null;
    this.node = null;
    replaceChildren(
      this.el,
      h('h2', { id: 'panel-title', tabindex: '-1' }, 'Nothing selected'),
      h('p', {}, 'Choose a node in the tree: arrow keys move, Enter opens, Right and Left expand and collapse.'),
    );
  }

  /** Show @path (a group, item or link). */
  async show(path) {
    const seq = ++this.seq;
    this.path = path;
    let r;
    try {
      r = await api.node(path);
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
    if (parent !== '/' && (r.data.creates || ['pending', 'live'].includes(baseName(parent)))) {
      try {
        parentNode = (await api.node(parent, { values: '0' })).data;
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

  // ---- a link -------------------------------------------------------------

  renderLink(link) {
    this.node = link;
    this.etag = link.revision;
    const go = h('button', { type: 'button', onclick: () => this.ctx.navigate(link.target) }, 'Go to target');
    const del = h('button', { type: 'button', class: 'danger', onclick: () => this.unlink(link.path) }, 'Remove link…');
    replaceChildren(
      this.el,
      h('h2', { id: 'panel-title', tabindex: '-1' }, link.name),
      h('p', { class: 'node-path' }, h('code', {}, link.path), ' ', h('span', { class: 'badge kind-link' }, 'link')),
      h('dl', { class: 'facts' }, h('dt', {}, 'Target'), h('dd', {}, h('code', { class: 'link-target-value' }, link.target))),
      h('div', { class: 'toolbar' }, go, del),
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

    const badges = [h('span', { class: `badge kind-${kindLabel(node).replace(' ', '-')}` }, kindLabel(node))];
    if (node.type) badges.push(h('span', { class: 'badge' }, `type ${node.type}`));
    if (node.committable) badges.push(h('span', { class: 'badge' }, 'committable'));
    if (node.live) badges.push(h('span', { class: 'badge live' }, 'live'));

    const tools = h('div', { class: 'toolbar', role: 'toolbar', 'aria-label': 'Node actions' });
    tools.append(h('button', { type: 'button', onclick: () => this.reload() }, 'Refresh'));
    tools.append(h('button', { type: 'button', 'aria-expanded': 'false', 'aria-controls': 'history', onclick: (e) => this.toggleHistory(e.currentTarget) }, 'History'));
    const commitInfo = this.commitInfo(node, parentNode, grandNode);
    if (commitInfo) {
      tools.append(
        h('button', { type: 'button', class: 'primary', onclick: () => this.rename(node.path, commitInfo.to, commitInfo.verb) }, commitInfo.verb === 'commit' ? 'Commit' : 'Uncommit'),
      );
    }
    // a live item cannot be removed (EPERM, configfs C6): uncommit it first
    const live = commitInfo && commitInfo.verb === 'uncommit';
    const deletable = (node.kind === 'item' || node.kind === 'group') && !node.default_group && !live;
    if (deletable) tools.append(h('button', { type: 'button', class: 'danger', onclick: () => this.rmdir() }, 'Delete…'));
    if (live) tools.append(h('span', { class: 'hint' }, 'Uncommit to delete.'));

    const sections = [];
    sections.push(this.attributesSection(node));
    this.childrenEl = h('section', { 'aria-labelledby': 'children-h', class: 'card' });
    sections.push(this.childrenEl);
    this.renderChildren(node);
    if (node.creates) sections.push(this.mkdirSection(node, desc, parentNode));
    // without a schema only the subsystem knows (allow_link): offer the form
    const linksAllowed = desc ? Boolean(schemaType && schemaType.links) : true;
    if (linksAllowed && node.kind !== 'root') sections.push(this.symlinkSection(node, schemaType));
    this.historyEl = h('section', { id: 'history', class: 'card', 'aria-labelledby': 'history-h', hidden: true });
    sections.push(this.historyEl);

    replaceChildren(
      this.el,
      h('h2', { id: 'panel-title', tabindex: '-1' }, node.name || '/'),
      h('p', { class: 'node-path' }, h('code', {}, node.path), ' ', badges),
      schemaType === undefined && desc ? h('p', { class: 'muted' }, 'This type is not in the schema.') : null,
      desc && desc.description && node.kind === 'subsystem' ? h('p', { class: 'muted' }, desc.description) : null,
      tools,
      sections,
    );
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

  attributesSection(node) {
    const sec = h('section', { class: 'card', 'aria-labelledby': 'attrs-h' }, h('h3', { id: 'attrs-h' }, 'Attributes'));
    if (!node.attributes.length) {
      sec.append(h('p', { class: 'muted' }, 'No attributes.'));
      return sec;
    }
    if (!this.props) {
      sec.append(h('p', { class: 'muted' }, this.desc === null ? 'No schema for this subsystem: values are plain text, checked by the subsystem itself.' : ''));
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
    const value = a.readable ? decodeValue(a) : '';
    const row = { name: a.name, attr: a, prop, revision: a.revision, value, dirty: false };
    const access = a.readable && a.writable ? 'read-write' : a.readable ? 'read-only' : a.writable ? 'write-only' : 'no access';
    const hint = [access, `mode ${a.mode}`];
    const rule = ruleText(prop);
    if (rule) hint.push(rule);
    if (a.binary) hint.push('binary');
    if (a.encoding === 'base64') hint.push('shown as base64');

    let ctl;
    if (a.writable && !a.binary) {
      ctl = makeControl(a.name, prop, value, {
        id,
        describedBy: `${hintId} ${errId}`,
        placeholder: a.readable ? undefined : 'write-only: the value cannot be read',
      });
    } else {
      const input = h('input', { id, type: 'text', value: a.readable ? value : '', readOnly: true, 'aria-describedby': hintId, class: 'readonly', placeholder: a.readable ? '' : 'not readable' });
      ctl = { control: input, read: () => input.value };
    }
    row.read = ctl.read;
    row.control = ctl.control;
    row.errEl = h('p', { id: errId, class: 'field-error', hidden: true });
    row.noteEl = h('p', { class: 'field-note', hidden: true, 'aria-live': 'polite' });
    const save = a.writable && !a.binary ? h('button', { type: 'submit' }, 'Save') : null;
    const revert = a.writable && !a.binary && a.readable ? h('button', { type: 'button', class: 'quiet revert', onclick: () => this.revert(row) }, 'Revert') : null;
    row.form = h(
      'form',
      { class: `attr-row ${access}`, dataset: { attr: a.name }, novalidate: true, onsubmit: (e) => { e.preventDefault(); this.store(row); } },
      h('label', { for: id, class: 'attr-name' }, a.name),
      h('div', { class: 'attr-input' }, ctl.control, save, revert),
      h('p', { id: hintId, class: 'hint' }, hint.join(' · ')),
      row.errEl,
      row.noteEl,
    );
    const mark = () => {
      row.dirty = row.read() !== row.value || (!a.readable && row.read() !== '');
      row.form.classList.toggle('dirty', row.dirty);
      if (!row.dirty) this.clearFieldError(row);
    };
    ctl.control.addEventListener('input', mark);
    ctl.control.addEventListener('change', mark);
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
  }

  async store(row) {
    const value = row.read();
    const bad = validate(row.name, row.prop, value);
    if (bad) {
      this.fieldError(row, bad);
      row.control.focus();
      return;
    }
    this.clearFieldError(row);
    const path = joinPath(this.node.path, row.name);
    try {
      const r = await api.store(path, value, row.revision);
      if (r.status === 204 || !r.data) {
        this.setRowValue(row, '', r.etag ?? row.revision);
      } else {
        this.setRowValue(row, decodeValue(r.data), r.data.revision);
      }
      // a store changes the item's revision too: keep Delete and Commit current
      if (row.revision > this.etag) this.etag = row.revision;
      this.ctx.notify.ok(`Saved ${row.name}.`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 412) {
        this.fieldError(row, `${row.name} was changed by someone else after it was loaded; your value was not saved.`);
        this.ctx.notify.error(e, {
          lead: `Conflict: ${path} changed since you loaded it; your value was not saved.`,
          actions: [{ label: 'Reload the value', run: () => this.reloadAttr(row) }],
        });
        return;
      }
      if (e instanceof ApiError && e.problem.detail) this.fieldError(row, e.problem.detail);
      this.ctx.notify.error(e);
    }
  }

  async reloadAttr(row) {
    const path = joinPath(this.node.path, row.name);
    if (!row.attr.readable) {
      // a write-only value cannot be read: take the new revision from the node
      const r = await api.node(this.node.path, { values: '0' });
      const a = r.data.attributes.find((x) => x.name === row.name);
      if (a) this.setRowValue(row, '', a.revision);
      return;
    }
    const r = await api.attribute(path);
    this.setRowValue(row, decodeValue(r.data), r.data.revision);
    row.control.focus();
  }

  /** A store happened at @path (an attribute of this node) in @revision. */
  async attributeChanged(name, revision) {
    const row = this.rows && this.rows.get(name);
    if (!row) return;
    if (revision > this.etag) this.etag = revision;
    if (revision <= row.revision) return;
    if (row.dirty) {
      row.noteEl.textContent = 'Changed on the server since you started editing: Save will report a conflict, Revert shows the new value.';
      row.noteEl.hidden = false;
      if (row.attr.readable) {
        // let Revert show the new value; keep the old revision for If-Match
        try {
          const r = await api.attribute(joinPath(this.node.path, name));
          row.value = decodeValue(r.data);
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
      if (!row.dirty) this.setRowValue(row, decodeValue(r.data), r.data.revision);
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) this.ctx.notify.error(e);
    }
  }

  // ---- children and links -------------------------------------------------

  renderChildren(node) {
    const list = h('ul', { class: 'child-list' });
    for (const c of node.children) {
      list.append(
        h('li', {}, h('button', { type: 'button', class: 'linkish', onclick: () => this.ctx.navigate(c.path) }, c.name), ' ', h('span', { class: 'badge' }, kindLabel(c))),
      );
    }
    for (const l of node.links) {
      const lp = joinPath(node.path, l.name);
      list.append(
        h(
          'li',
          { class: 'link-row', dataset: { link: l.name } },
          h('span', { class: 'link-name' }, l.name),
          ' ',
          h('span', { class: 'badge kind-link' }, 'link'),
          ' → ',
          h('button', { type: 'button', class: 'linkish', 'aria-label': `Go to ${l.target}`, onclick: () => this.ctx.navigate(l.target) }, l.target),
          ' ',
          h('button', { type: 'button', class: 'danger small', 'aria-label': `Remove link ${l.name}`, onclick: () => this.unlink(lp) }, 'Remove'),
        ),
      );
    }
    replaceChildren(
      this.childrenEl,
      h('h3', { id: 'children-h' }, 'Children and links'),
      node.children.length + node.links.length ? list : h('p', { class: 'muted' }, 'None.'),
    );
  }

  /** The children or links of the shown node changed: list them again. */
  async structureChanged() {
    if (!this.node || this.node.kind === 'link' || !this.childrenEl) return;
    const path = this.node.path;
    try {
      const r = await api.node(path, { values: '0' });
      if (this.path !== path || !this.node) return;
      this.node.children = r.data.children;
      this.node.links = r.data.links;
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
    const nameInput = h('input', { id: nameId, type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${nameId}-err` });
    const fields = [];
    const fieldset = h('div', { class: 'attr-list' });
    if (props) {
      for (const [name, prop] of Object.entries(props)) {
        if (prop.readOnly || (parseInt(prop['x-mode'] || '0644', 8) & 0o222) === 0) continue;
        const id = uid('new');
        const initial = prop.default === undefined ? '' : prop.default === true ? '1' : prop.default === false ? '0' : String(prop.default);
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
    const form = h(
      'form',
      {
        class: 'mkdir-form',
        novalidate: true,
        onsubmit: async (e) => {
          e.preventDefault();
          const name = nameInput.value;
          let bad = nameProblem(name);
          nameErr.hidden = !bad;
          nameErr.textContent = bad || '';
          if (bad) nameInput.setAttribute('aria-invalid', 'true');
          else nameInput.removeAttribute('aria-invalid');
          const attrs = {};
          let firstBad = bad ? nameInput : null;
          for (const f of fields) {
            const v = f.ctl.read();
            const msg = v === f.initial ? null : validate(f.name, f.prop, v);
            f.err.hidden = !msg;
            f.err.textContent = msg || '';
            if (msg) {
              f.ctl.control.setAttribute('aria-invalid', 'true');
              firstBad = firstBad || f.ctl.control;
              bad = bad || msg;
            } else {
              f.ctl.control.removeAttribute('aria-invalid');
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
            this.ctx.notify.ok(`Created ${joinPath(node.path, name)}.`);
            await this.ctx.tree.changed(node.path);
            await this.ctx.navigate(joinPath(node.path, name));
          } catch (err) {
            this.ctx.notify.error(err);
          } finally {
            submit.disabled = false;
          }
        },
      },
      h('div', { class: 'attr-row' }, h('label', { for: nameId, class: 'attr-name' }, 'Name'), h('div', { class: 'attr-input' }, nameInput), nameErr),
      fields.length
        ? h('details', { class: 'initial', open: fields.length <= 6 }, h('summary', {}, `Initial attributes of the new ${childType} (optional; stored with the ${what} as one change)`), fieldset)
        : null,
      h('div', { class: 'toolbar' }, submit),
    );
    return h('section', { class: 'card', 'aria-labelledby': 'mkdir-h' }, h('h3', { id: 'mkdir-h' }, `New ${what}${childType ? ` (${childType})` : ''}`), form);
  }

  symlinkSection(node, schemaType) {
    const tId = uid('target');
    const nId = uid('lname');
    const target = h('input', { id: tId, type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: '/subsystem/group/item', 'aria-describedby': `${tId}-hint` });
    const lname = h('input', { id: nId, type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'the target\u2019s name', 'aria-describedby': `${nId}-hint` });
    const allow = schemaType && schemaType.links ? `Targets of type ${schemaType.links.allow.join(', ')}.` : 'The subsystem decides which targets it accepts.';
    const err = h('p', { class: 'field-error', hidden: true });
    const form = h(
      'form',
      {
        class: 'symlink-form',
        novalidate: true,
        onsubmit: async (e) => {
          e.preventDefault();
          const t = target.value.trim();
          const name = lname.value || baseName(t);
          const bad = !t.startsWith('/') ? 'the target is an absolute config path, starting with /' : nameProblem(name);
          err.hidden = !bad;
          err.textContent = bad || '';
          if (bad) {
            target.focus();
            return;
          }
          try {
            await api.symlink(joinPath(node.path, name), t);
            this.ctx.notify.ok(`Linked ${joinPath(node.path, name)} → ${t}.`);
            target.value = '';
            lname.value = '';
            await this.ctx.tree.changed(node.path);
            await this.ctx.tree.reveal(joinPath(node.path, name), { focus: false, select: false });
            await this.structureChanged();
          } catch (x) {
            this.ctx.notify.error(x);
          }
        },
      },
      h('div', { class: 'attr-row' }, h('label', { for: tId, class: 'attr-name' }, 'Target'), h('div', { class: 'attr-input' }, target), h('p', { class: 'hint', id: `${tId}-hint` }, allow)),
      h('div', { class: 'attr-row' }, h('label', { for: nId, class: 'attr-name' }, 'Link name'), h('div', { class: 'attr-input' }, lname), h('p', { class: 'hint', id: `${nId}-hint` }, 'optional: the target\u2019s own name')),
      err,
      h('div', { class: 'toolbar' }, h('button', { type: 'submit' }, 'Create link')),
    );
    return h('section', { class: 'card', 'aria-labelledby': 'symlink-h' }, h('h3', { id: 'symlink-h' }, 'New link'), form);
  }

  // ---- operations on the node ---------------------------------------------

  async rmdir() {
    const node = this.node;
    const ok = await this.ctx.confirm(`Delete ${node.path}? This removes the ${node.kind} (rmdir); its values are gone.`, 'Delete');
    if (!ok) return;
    try {
      await api.remove(node.path, this.etag);
      this.ctx.notify.ok(`Deleted ${node.path}.`);
      await this.ctx.tree.changed(parentPath(node.path));
      await this.ctx.navigate(parentPath(node.path));
    } catch (e) {
      this.ctx.notify.error(e, e instanceof ApiError && e.status === 412 ? { lead: `Conflict: ${node.path} changed since you loaded it; nothing was deleted.`, actions: [{ label: 'Reload', run: () => this.reload() }] } : {});
    }
  }

  async unlink(path) {
    const ok = await this.ctx.confirm(`Remove the link ${path}? Its target stays.`, 'Remove link');
    if (!ok) return;
    try {
      await api.remove(path);
      this.ctx.notify.ok(`Removed the link ${path}.`);
      await this.ctx.tree.changed(parentPath(path));
      if (this.path === path) await this.ctx.navigate(parentPath(path));
      else await this.structureChanged();
    } catch (e) {
      this.ctx.notify.error(e);
    }
  }

  async rename(from, to, verb) {
    try {
      await api.rename(from, to, this.etag);
      this.ctx.notify.ok(`${verb === 'commit' ? 'Committed' : 'Uncommitted'} ${baseName(from)}: now ${to}.`);
      await this.ctx.tree.changed(parentPath(from));
      await this.ctx.tree.changed(parentPath(to));
      await this.ctx.navigate(to);
    } catch (e) {
      this.ctx.notify.error(e, e instanceof ApiError && e.status === 412 ? { lead: `Conflict: ${from} changed since you loaded it.`, actions: [{ label: 'Reload', run: () => this.reload() }] } : {});
    }
  }

  // ---- history ------------------------------------------------------------

  async toggleHistory(btn) {
    const open = this.historyEl.hidden;
    btn.setAttribute('aria-expanded', String(open));
    this.historyEl.hidden = !open;
    if (!open) return;
    const table = h('table', { class: 'history' }, h('caption', {}, `Changes at and under ${this.node.path}, newest first`), h('thead', {}, h('tr', {}, ['Revision', 'Time', 'Who', 'Operation', 'Path', 'Value'].map((t) => h('th', { scope: 'col' }, t)))));
    const body = h('tbody');
    table.append(body);
    const more = h('button', { type: 'button', hidden: true }, 'Older changes');
    replaceChildren(this.historyEl, h('h3', { id: 'history-h' }, 'History'), h('div', { class: 'table-wrap' }, table), more);
    let before = null;
    const load = async () => {
      try {
        const r = await api.history(this.node.path, before);
        for (const e of r.data.entries) {
          let val = '';
          if (e.op === 'store') val = e.value === undefined ? '(write-only)' : `${JSON.stringify(e.value)}${e.old !== undefined ? ` (was ${JSON.stringify(e.old.replace(/\n$/, ''))})` : ''}`;
          else if (e.op === 'symlink') val = `→ ${e.target}`;
          else if (e.op === 'rename') val = `${e.from} → ${e.to}`;
          body.append(h('tr', {}, h('td', {}, String(e.revision)), h('td', {}, e.time), h('td', {}, e.principal ?? ''), h('td', {}, e.op), h('td', {}, h('code', {}, e.path || '')), h('td', {}, val)));
        }
        if (!body.children.length) body.append(h('tr', {}, h('td', { colspan: '6' }, 'No recorded changes.')));
        before = r.data.next_before;
        more.hidden = before === null || before === undefined;
      } catch (e) {
        this.ctx.notify.error(e);
      }
    };
    more.addEventListener('click', load);
    await load();
  }

  /** True when the panel shows @path or something under it. */
  showsUnder(path) {
    return this.path !== null && isUnder(this.path, path);
  }
}
