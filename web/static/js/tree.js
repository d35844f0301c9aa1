// SPDX-License-Identifier: MIT
// tree.js - the configuration tree as an ARIA tree view (WAI-ARIA APG
// "tree view" pattern): lazy loading, one level per GET with ?depth=1 and
// ?values=0, roving tabindex, keyboard: Up/Down, Left/Right (collapse or
// go to the parent / expand or go to the first child), Home/End, Enter
// (select; on a link, go to its target), * (expand the siblings).

import { api } from './api.js';
import { h, joinPath, parentPath, baseName, isUnder } from './dom.js';

/** What a tree row says the node is. */
export function kindLabel(n) {
  if (n.kind === 'link') return 'link';
  if (n.default_group) return 'default group';
  return n.kind; // subsystem, group, item
}

export class Tree {
  /**
   * @param {HTMLElement} ul  the role=tree list
   * @param {object} h  onSelect(path, entry), onError(e)
   */
  constructor(ul, handlers) {
    this.ul = ul;
    this.hd = handlers;
    this.entries = new Map(); // path -> entry
    this.selected = null;
    this.focused = null;
    ul.addEventListener('keydown', (e) => this.onKey(e));
    ul.addEventListener('click', (e) => this.onClick(e));
  }

  /** Load the subsystems (the root's children). */
  async load() {
    const r = await api.node('/', { depth: '1', values: '0' });
    this.root = { path: '/', kind: 'root', li: null, group: this.ul, loaded: true, expanded: true, level: 0 };
    this.entries.clear();
    this.entries.set('/', this.root);
    this.ul.replaceChildren();
    this.fill(this.root, r.data);
    const first = this.ul.querySelector('[role=treeitem]');
    if (first) this.setFocusable(this.entryOf(first));
  }

  entryOf(li) {
    return this.entries.get(li.dataset.path);
  }

  makeEntry(info, parent) {
    const e = {
      path: info.path,
      name: info.name,
      kind: info.kind,
      default_group: Boolean(info.default_group),
      target: info.target || null,
      expandable: info.kind !== 'link',
      loaded: false,
      expanded: false,
      level: parent.level + 1,
    };
    const label = h('span', { class: 'tree-name' }, info.name);
    const kind = h('span', { class: `badge kind-${kindLabel(info).replace(' ', '-')}` }, kindLabel(info));
    const row = h('span', { class: 'tree-row' }, h('span', { class: 'twisty', 'aria-hidden': 'true' }), label, ' ', kind);
    if (info.kind === 'link') {
      row.append(' ', h('span', { class: 'link-target' }, `→ ${info.target}`));
    }
    e.li = h('li', {
      role: 'treeitem',
      'aria-level': String(e.level),
      'aria-selected': 'false',
      tabindex: '-1',
      dataset: { path: info.path, kind: kindLabel(info) },
    }, row);
    e.group = null;
    this.setExpandable(e, e.expandable);
    this.entries.set(e.path, e);
    return e;
  }

  setExpandable(e, yes) {
    e.expandable = yes;
    if (yes) e.li.setAttribute('aria-expanded', String(e.expanded));
    else e.li.removeAttribute('aria-expanded');
  }

  /**
   * Make @e's children those of @node (a Node with depth >= 1): keep the
   * entries (and their open subtrees) of names still there, add new ones
   * in listing order, drop the others.
   */
  fill(e, node) {
    const want = [];
    for (const c of node.children || []) {
      const full = typeof c.children !== 'undefined';
      want.push({ ...c, hasKids: full ? c.children.length + c.links.length > 0 : true });
    }
    for (const l of node.links || []) {
      want.push({ name: l.name, path: joinPath(node.path, l.name), kind: 'link', target: l.target, hasKids: false });
    }
    if (!e.group) {
      e.group = h('ul', { role: 'group' });
      e.li.append(e.group);
    }
    const keep = new Set(want.map((w) => w.path));
    for (const li of [...e.group.children]) {
      if (!keep.has(li.dataset.path)) this.drop(this.entryOf(li));
    }
    let prev = null;
    for (const w of want) {
      let c = this.entries.get(w.path);
      if (c && (c.kind !== w.kind || c.target !== (w.target || null))) {
        this.drop(c);
        c = null;
      }
      if (!c) c = this.makeEntry(w, e);
      if (w.kind !== 'link' && !c.loaded) this.setExpandable(c, w.hasKids);
      if (w.kind !== 'link' && c.loaded && !w.hasKids) {
        this.collapse(c);
        this.setExpandable(c, false);
        c.loaded = false;
      } else if (w.kind !== 'link' && w.hasKids && !c.expandable) {
        this.setExpandable(c, true);
      }
      const at = prev ? prev.nextSibling : e.group.firstChild;
      if (at !== c.li) e.group.insertBefore(c.li, at);
      prev = c.li;
    }
    e.loaded = true;
    if (e !== this.root && !want.length) {
      this.collapse(e);
      this.setExpandable(e, false);
    }
    e.group.hidden = !e.expanded;
    if (!this.focused || !this.focused.li.isConnected) {
      const first = this.ul.querySelector('[role=treeitem]');
      if (first) this.setFocusable(this.entryOf(first));
    }
  }

  drop(e) {
    if (!e) return;
    for (const p of [...this.entries.keys()]) {
      if (isUnder(p, e.path)) this.entries.delete(p);
    }
    const wasFocused = this.focused && isUnder(this.focused.path, e.path);
    e.li.remove();
    if (this.selected && isUnder(this.selected, e.path)) this.selected = null;
    if (wasFocused) this.focused = null;
  }

  async expand(e) {
    if (!e.expandable) return;
    if (!e.loaded) await this.refresh(e.path);
    if (!e.loaded || !e.expandable) return;
    e.expanded = true;
    e.li.setAttribute('aria-expanded', 'true');
    if (e.group) e.group.hidden = false;
  }

  collapse(e) {
    if (!e.expandable) return;
    e.expanded = false;
    e.li.setAttribute('aria-expanded', 'false');
    if (e.group) e.group.hidden = true;
  }

  /** Load @path's children again (or for the first time). */
  async refresh(path) {
    const e = this.entries.get(path);
    if (!e) return;
    if (path === '/') return this.reloadRoot();
    try {
      const r = await api.node(path, { depth: '1', values: '0' });
      const now = this.entries.get(path);
      if (now) this.fill(now, r.data);
    } catch (err) {
      if (err.status === 404) {
        this.drop(this.entries.get(path));
      } else {
        this.hd.onError(err);
      }
    }
  }

  async reloadRoot() {
    const r = await api.node('/', { depth: '1', values: '0' });
    this.fill(this.root, r.data);
  }

  /** The children or links of @dirPath changed: list them again if they
   * are loaded; else only offer to expand it (a load tells the rest). */
  async changed(dirPath) {
    const e = this.entries.get(dirPath);
    if (!e) return;
    if (e.loaded) await this.refresh(dirPath);
    else if (e.kind !== 'link') this.setExpandable(e, true);
  }

  /** Open the ancestors of @path, then select and focus it. */
  async reveal(path, { focus = true, select = true } = {}) {
    const names = path.split('/').filter(Boolean);
    let cur = '/';
    for (let i = 0; i < names.length - 1; i++) {
      cur = joinPath(cur, names[i]);
      const e = this.entries.get(cur);
      if (!e) {
        await this.refresh(parentPath(cur));
      }
      const e2 = this.entries.get(cur);
      if (!e2) return false;
      if (!e2.loaded) await this.refresh(cur);
      if (!e2.expandable) this.setExpandable(e2, true);
      await this.expand(e2);
    }
    let e = this.entries.get(path);
    if (!e) {
      await this.refresh(parentPath(path));
      e = this.entries.get(path);
    }
    if (!e) return false;
    if (select) this.select(e);
    this.setFocusable(e);
    if (focus) e.li.focus();
    e.li.scrollIntoView({ block: 'nearest' });
    return true;
  }

  select(e) {
    if (this.selected) {
      const old = this.entries.get(this.selected);
      if (old) old.li.setAttribute('aria-selected', 'false');
    }
    this.selected = e.path;
    e.li.setAttribute('aria-selected', 'true');
    this.setFocusable(e);
    this.hd.onSelect(e.path, e);
  }

  setFocusable(e) {
    if (!e) return;
    if (this.focused && this.focused.li) this.focused.li.tabIndex = -1;
    this.focused = e;
    e.li.tabIndex = 0;
  }

  visible() {
    const out = [];
    const walk = (ul) => {
      for (const li of ul.children) {
        const e = this.entryOf(li);
        if (!e) continue;
        out.push(e);
        if (e.expanded && e.group) walk(e.group);
      }
    };
    walk(this.ul);
    return out;
  }

  moveTo(e) {
    if (!e) return;
    this.setFocusable(e);
    e.li.focus();
    e.li.scrollIntoView({ block: 'nearest' });
  }

  onClick(ev) {
    const li = ev.target.closest('[role=treeitem]');
    if (!li) return;
    const e = this.entryOf(li);
    if (!e) return;
    ev.stopPropagation();
    if (ev.target.closest('.twisty')) {
      this.toggle(e);
      this.moveTo(e);
      return;
    }
    this.moveTo(e);
    this.select(e);
    if (e.expandable && !e.expanded) this.expand(e).catch((err) => this.hd.onError(err));
  }

  toggle(e) {
    if (e.expanded) this.collapse(e);
    else this.expand(e).catch((err) => this.hd.onError(err));
  }

  onKey(ev) {
    const li = ev.target.closest('[role=treeitem]');
    if (!li || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const e = this.entryOf(li);
    if (!e) return;
    const vis = this.visible();
    const i = vis.indexOf(e);
    let handled = true;
    switch (ev.key) {
      case 'ArrowDown':
        this.moveTo(vis[i + 1]);
        break;
      case 'ArrowUp':
        this.moveTo(vis[i - 1]);
        break;
      case 'Home':
        this.moveTo(vis[0]);
        break;
      case 'End':
        this.moveTo(vis[vis.length - 1]);
        break;
      case 'ArrowRight':
        if (e.expandable && !e.expanded) this.expand(e).catch((err) => this.hd.onError(err));
        else if (e.expanded && e.group && e.group.firstElementChild) this.moveTo(this.entryOf(e.group.firstElementChild));
        break;
      case 'ArrowLeft':
        if (e.expanded) this.collapse(e);
        else if (e.level > 1) this.moveTo(this.entries.get(parentPath(e.path)));
        break;
      case 'Enter':
      case ' ':
        this.select(e);
        if (ev.key === 'Enter' && e.kind === 'link') this.hd.onFollow(e.target);
        break;
      case '*':
        for (const s of e.li.parentElement.children) {
          const se = this.entryOf(s);
          if (se && se.expandable) this.expand(se).catch((err) => this.hd.onError(err));
        }
        break;
      default:
        handled = false;
    }
    if (handled) {
      ev.preventDefault();
      ev.stopPropagation();
    }
  }

  /** True when the tree shows @path. */
  has(path) {
    return this.entries.has(path);
  }

  nameOf(path) {
    return baseName(path);
  }
}
