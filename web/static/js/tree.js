// SPDX-License-Identifier: MIT
// tree.js - the configuration tree as an ARIA tree view (WAI-ARIA APG
// "tree view" pattern): lazy loading, one level per GET with ?depth=1 and
// ?values=0, roving tabindex, keyboard: Up/Down, Left/Right (collapse or
// go to the parent / expand or go to the first child), Home/End, Enter
// (select; on a link, go to its target), * (expand the siblings), and
// type-ahead: printable keys typed in quick succession move focus to the
// next sibling whose name starts with them (in a group not read whole,
// the server's page from that name on, ?name_from=).
//
// Big groups: a group's children are read a page (PAGE, sorted by name) at
// a time with ?limit= and the server's next_after cursor, and at most PAGE
// of the pages read are rows at once (a window); "Show more" reads or
// shows the next page, "Show earlier" moves the window back (reading the
// page before with the prev_before cursor when the pages read do not
// start at the first child). "Jump to end" reads the last page
// (?from=end), "Jump to start" the first, and seek() the page from a
// name on (?name_from=, type-to-find): what is read is always one run of
// the names in order, children_offset of them before it. A node
// revealed beyond what was read (a deep link) is looked up by name and
// shown after the "Show more" row. The filter keeps the rows whose name
// holds the text and the ancestors of such rows; in a group not read
// whole, the server filters (?name_contains=).
//
// Summaries: where the subsystem's schema gives a type a "summary"
// template, the rows shown (the window, never the rest of the group) get
// it after their name, from one read of those children with their values
// (?depth=1 from the window's first name, as many as it shows); a
// subsystem without templates costs nothing.

import { api } from './api.js';
import { h, joinPath, parentPath, baseName, isUnder } from './dom.js';
import { schemaOf, propsOf, summaryOf } from './schema.js';

export const PAGE = 200;

/** What a tree row says the node is. */
export function kindLabel(n) {
  if (n.kind === 'link') return 'link';
  if (n.default_group) return 'default group';
  return n.kind; // subsystem, group, item
}

export class Tree {
  /**
   * @param {HTMLElement} ul  the role=tree list
   * @param {object} handlers  onSelect(path, entry), onFollow(target),
   *   onError(e), canLeave(path) -> Promise<boolean> (false keeps the
   *   current selection, e.g. when the user keeps staged edits)
   */
  constructor(ul, handlers) {
    this.ul = ul;
    this.hd = handlers;
    this.entries = new Map(); // path -> entry
    this.pseudo = new WeakMap(); // "show more" li -> {more, parent, dir, li}
    this.selected = null;
    this.focused = null;
    this.query = '';
    this.pinned = null; // a path revealed while a filter hides it
    this.typed = { text: '', at: 0 }; // type-ahead: the keys typed lately
    ul.addEventListener('keydown', (e) => this.onKey(e));
    ul.addEventListener('click', (e) => this.onClick(e));
  }

  /** Load the subsystems (the root's children). */
  async load() {
    // the subsystems, in registration order (a handful: not paged)
    const r = await api.node('/', { values: '0' });
    this.root = { path: '/', kind: 'root', li: null, group: this.ul, loaded: true, expanded: true, level: 0, kids: [], start: 0, count: PAGE, extra: new Map() };
    this.entries.clear();
    this.entries.set('/', this.root);
    this.ul.replaceChildren();
    this.fill(this.root, r.data);
    const first = this.ul.querySelector('[role=treeitem]');
    if (first) this.setFocusable(this.entryOf(first));
  }

  entryOf(li) {
    if (li.dataset.more) return this.pseudo.get(li);
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
      kids: [],
      start: 0,
      count: PAGE,
      next: null,
      prev: null, // the cursor of the page before the names read
      head: 0, // the children before the names read
      ctotal: 0, // the children (no links) the server counts
      total: 0,
      extra: new Map(), // path -> child revealed beyond the pages read
      found: null, // the server's answer to the filter: {query, kids, total}
    };
    const label = h('span', { class: 'tree-name', title: info.name }, info.name);
    const kind = h('span', { class: `badge kind-${kindLabel(info).replace(' ', '-')}` }, kindLabel(info));
    e.countEl = h('span', { class: 'tree-count', hidden: true });
    e.sumEl = h('span', { class: 'tree-summary', hidden: true });
    const row = h('span', { class: 'tree-row' }, h('span', { class: 'twisty', 'aria-hidden': 'true' }), label, ' ', kind, e.countEl, e.sumEl);
    if (info.kind === 'link') {
      row.append(' ', h('span', { class: 'link-target', title: info.target }, `→ ${info.target}`));
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

  /** The children of @node (a page of them) as rows' infos. */
  static infos(node, keepOrder = false) {
    const want = [];
    for (const c of node.children || []) {
      // a summary (depth 0) says has_children: an expand arrow only
      // when there is something to expand (an older server does not say:
      // offer to expand, and the expand finds out)
      const full = typeof c.children !== 'undefined';
      const kids = full ? c.children.length + c.links.length > 0 : typeof c.has_children === 'boolean' ? c.has_children : true;
      want.push({ name: c.name, path: c.path, kind: c.kind, default_group: c.default_group, hasKids: kids });
    }
    for (const l of node.links || []) {
      want.push({ name: l.name, path: joinPath(node.path, l.name), kind: 'link', target: l.target, hasKids: false });
    }
    if (keepOrder) return want;
    return want.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Make @e's children those of @node (the first page(s) of a listing),
   * then show the window of them: entries (and their open subtrees) of
   * names still there are kept, new ones added in order, the others
   * dropped.
   */
  fill(e, node) {
    e.head = node.children_offset ?? 0;
    e.prev = node.prev_before ?? null;
    // links are not paged: they sort in with the run from the first name
    const want = Tree.infos(e.head ? { ...node, links: [] } : node, e === this.root);
    e.kids = want;
    e.next = node.next_after ?? null;
    const links = (node.links || []).length;
    e.ctotal = node.children_total ?? (node.children || []).length;
    e.total = node.children_total !== undefined ? node.children_total + links : want.length;
    for (const p of [...e.extra.keys()]) if (want.some((w) => w.path === p)) e.extra.delete(p);
    e.found = null;
    e.loaded = true;
    if (e.countEl) {
      e.countEl.hidden = e.total <= PAGE;
      e.countEl.textContent = `${e.total.toLocaleString('en')}`;
      e.countEl.title = `${e.total} children and links`;
    }
    if (e !== this.root && !e.total) {
      this.collapse(e);
      this.setExpandable(e, false);
    } else if (e !== this.root && !e.expandable) {
      this.setExpandable(e, true);
    }
    this.render(e);
  }

  /** Read the next page of @e's children (after what was read). */
  async readMore(e) {
    if (!e.next) return;
    const r = await api.children(e.path, { limit: PAGE, after: e.next });
    const more = Tree.infos({ ...r.data, links: [] }).filter((w) => !e.kids.some((k) => k.path === w.path));
    e.kids = e.kids.concat(more);
    e.next = r.data.next_after ?? null;
    e.ctotal = r.data.children_total;
    e.total = r.data.children_total + (r.data.links || []).length;
    for (const w of more) e.extra.delete(w.path);
  }

  /** Read the page of @e's children before those read; @return how many
   * rows came before the first one read. */
  async readEarlier(e) {
    if (!e.prev) return 0;
    const r = await api.children(e.path, { limit: PAGE, before: e.prev });
    const have = new Set(e.kids.map((k) => k.path));
    const atStart = !r.data.children_offset;
    const more = Tree.infos(atStart ? r.data : { ...r.data, links: [] }).filter((w) => !have.has(w.path));
    const old = e.kids.length;
    e.kids = more.concat(e.kids);
    if (atStart) e.kids.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    e.head = r.data.children_offset ?? 0;
    e.prev = r.data.prev_before ?? null;
    e.ctotal = r.data.children_total;
    e.total = r.data.children_total + (r.data.links || []).length;
    for (const w of more) e.extra.delete(w.path);
    return e.kids.length - old;
  }

  /** The children of @e after the names read, not read yet. */
  static unreadAfter(e) {
    return Math.max(0, e.ctotal - e.head - e.kids.filter((k) => k.kind !== 'link').length);
  }

  /** Type-to-find: read the page of @e's children from the first name at
   * or past @text on (the server finds it by a binary search) and show
   * it, unless @current() says a newer seek was asked for; @return the
   * first child's info (null: no name sorts there, or not shown). */
  async seek(e, text, current = () => true) {
    const r = await api.children(e.path, { limit: PAGE, nameFrom: text });
    if (!this.entries.has(e.path) || !current()) return null; // typed on meanwhile
    e.start = 0;
    e.count = PAGE;
    this.fill(e, r.data);
    const first = e.kids.find((k) => k.kind !== 'link' && k.name >= text) || null;
    if (first) {
      const i = this.shownKids(e).indexOf(first);
      if (i > 0) {
        e.start = i;
        this.render(e);
      }
      const c = this.entries.get(first.path);
      if (c && e.expanded) this.scrollTo(c);
    }
    return first;
  }

  /** The children of @e the filter lets through. */
  shownKids(e) {
    if (!this.query) return e.kids;
    if (e.found && e.found.query === this.query) {
      const seen = new Set(e.found.kids.map((k) => k.path));
      return e.found.kids.concat(e.kids.filter((k) => !seen.has(k.path) && this.passes(k)));
    }
    return e.kids.filter((k) => this.passes(k));
  }

  passes(k) {
    if (!this.query) return true;
    if (this.pinned && isUnder(this.pinned, k.path)) return true;
    if (this.selected && isUnder(this.selected, k.path)) return true;
    if (k.name.includes(this.query)) return true;
    const c = this.entries.get(k.path);
    return Boolean(c && c.loaded && c.kids.some((g) => this.passes(g)));
  }

  /** Show the window of @e's children as rows. */
  render(e) {
    if (!e.group) {
      e.group = h('ul', { role: 'group' });
      e.li.append(e.group);
    }
    const list = this.shownKids(e);
    if (e.start >= list.length) e.start = Math.max(0, list.length - PAGE);
    const win = list.slice(e.start, e.start + e.count);
    const inWin = new Set(win.map((w) => w.path));
    const extra = [...e.extra.values()].filter((x) => !inWin.has(x.path) && (!this.query || this.passes(x)));
    const keep = new Set([...inWin, ...extra.map((x) => x.path)]);
    for (const li of [...e.group.children]) {
      if (li.dataset.more) li.remove();
      else if (!keep.has(li.dataset.path)) this.drop(this.entryOf(li));
    }
    let prev = null;
    const place = (li) => {
      const at = prev ? prev.nextSibling : e.group.firstChild;
      if (at !== li) e.group.insertBefore(li, at);
      prev = li;
    };
    const above = e.start + (this.query ? 0 : e.head);
    if (above > 0 && !this.query && e.start + e.head > PAGE) place(this.moreRow(e, 'start', above));
    if (above > 0) place(this.moreRow(e, 'prev', above));
    for (const w of win) {
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
      place(c.li);
      if (c.loaded && this.query) this.render(c);
    }
    const unread = this.query ? (e.found && e.found.query === this.query ? e.found.total - e.found.kids.length : 0) : Tree.unreadAfter(e);
    const after = list.length - e.start - win.length + Math.max(0, unread);
    if (after > 0) place(this.moreRow(e, 'next', after));
    if (after > PAGE && !this.query) place(this.moreRow(e, 'end', Math.min(PAGE, e.ctotal)));
    for (const x of extra) {
      let c = this.entries.get(x.path);
      if (!c) c = this.makeEntry(x, e);
      place(c.li);
    }
    e.group.hidden = !e.expanded;
    if (!this.query) this.summarize(e, win).catch(() => {}); // a help, not the listing
    if (!this.focused || !this.focused.li.isConnected) {
      const first = this.ul.querySelector('[role=treeitem]');
      if (first) this.setFocusable(this.entryOf(first));
    }
  }

  /** Put the schema's one-line summary after the rows of @win (children
   * of @e, in name order): one read of them with their values, skipped
   * when the subsystem has no summary or the same rows have theirs. */
  async summarize(e, win, again = false) {
    if (e === this.root || e.kind === 'link') return;
    const kids = win.filter((w) => w.kind !== 'link');
    if (!kids.length) return;
    const key = `${kids[0].name}/${kids.length}`;
    if (!again && e.sumKey === key && kids.every((k) => this.entries.get(k.path)?.sumEl.dataset.done)) return;
    e.sumKey = key;
    const desc = await schemaOf(e.path.split('/')[1]);
    if (!desc || !Object.values(desc.types).some((t) => t.summary)) return;
    if (this.entries.get(e.path) !== e || !e.loaded) return; // gone meanwhile
    const r = await api.node(e.path, { depth: '1', limit: String(kids.length), name_from: kids[0].name });
    for (const c of r.data.children) {
      const t = c.type && desc.types[c.type];
      const row = this.entries.get(c.path);
      if (!row || !row.sumEl) continue;
      const text = t && t.summary ? summaryOf(t.summary, c, propsOf(desc, c.type)) : '';
      row.sumEl.textContent = text;
      row.sumEl.title = text;
      row.sumEl.hidden = !text;
      row.sumEl.dataset.done = '1';
    }
  }

  /** Something in a child of loaded @dirPath changed (a value, a link):
   * read the summaries of its rows again. */
  async resummarize(dirPath) {
    const e = this.entries.get(dirPath);
    if (!e || !e.loaded || !e.group || this.query) return;
    const win = this.shownKids(e).slice(e.start, e.start + e.count);
    await this.summarize(e, win, true);
  }

  moreRow(e, dir, n) {
    const texts = {
      next: () => `Show ${Math.min(n, PAGE)} more (${n.toLocaleString('en')} not shown)`,
      prev: () => `Show ${Math.min(n, PAGE)} earlier (${n.toLocaleString('en')} above)`,
      end: () => `Jump to end (the last ${n.toLocaleString('en')} of ${e.total.toLocaleString('en')})`,
      start: () => 'Jump to start',
    };
    const text = texts[dir]();
    const li = h('li', {
      role: 'treeitem',
      class: 'tree-more',
      'aria-level': String(e.level + 1),
      tabindex: '-1',
      dataset: { more: dir, parent: e.path },
    }, h('span', { class: 'tree-row' }, h('span', { class: 'twisty', 'aria-hidden': 'true' }), text));
    this.pseudo.set(li, { more: dir, parent: e, li, path: null, level: e.level + 1 });
    return li;
  }

  /** Move @p's parent window one page on (or back), or to the end (or the
   * start); focus the first new row (at the end: the last). */
  async showMore(p) {
    const e = p.parent;
    let first;
    if (p.more === 'end' || p.more === 'start') {
      await this.jump(e, p.more);
      return;
    }
    if (p.more === 'next') {
      first = e.start + e.count;
      const have = this.shownKids(e).length;
      if (first + PAGE > have) {
        if (this.query && e.found && e.found.query === this.query && e.found.next) await this.findMore(e);
        else if (!this.query && e.next) await this.readMore(e);
      }
      e.count += PAGE;
      // keep at most a few pages of rows: move the window on
      if (e.count > 3 * PAGE) {
        e.start += e.count - 3 * PAGE;
        e.count = 3 * PAGE;
      }
    } else {
      if (e.start < PAGE && e.prev && !this.query) e.start += await this.readEarlier(e);
      first = Math.max(0, e.start - PAGE);
      e.count = Math.min(3 * PAGE, e.count + e.start - first);
      e.start = first;
    }
    this.render(e);
    const list = this.shownKids(e);
    const k = list[Math.min(first, list.length - 1)];
    if (k) this.moveTo(this.entries.get(k.path));
  }

  /** seek() in the loaded group @path (nothing when it is not shown). */
  async seekIn(path, text) {
    const e = this.entries.get(path);
    if (!e || !e.loaded || e === this.root) return null;
    if (!text) return this.jump(e, 'start', false);
    return this.seek(e, text);
  }

  /** Show the last page of @e's children (@where 'end') or the first
   * ('start'), reading it when it was not read; focus its last (first)
   * row. */
  async jump(e, where, focus = true) {
    if (where === 'end' && Tree.unreadAfter(e) > 0) {
      const r = await api.children(e.path, { limit: PAGE, end: true });
      if (!this.entries.has(e.path)) return;
      this.fill(e, r.data);
    } else if (where === 'start' && e.head > 0) {
      const r = await api.children(e.path, { limit: PAGE });
      if (!this.entries.has(e.path)) return;
      this.fill(e, r.data);
    }
    const list = this.shownKids(e);
    e.count = PAGE;
    e.start = where === 'end' ? Math.max(0, list.length - PAGE) : 0;
    this.render(e);
    const k = where === 'end' ? list[list.length - 1] : list[0];
    if (k && focus) this.moveTo(this.entries.get(k.path));
  }

  /** Filter the rows by @text (part of the name): groups read whole are
   * filtered here, the others by the server (?name_contains=). Resolves
   * to {matches, where} or null without a filter. */
  async setFilter(text) {
    const q = text.trim();
    this.query = q;
    this.pinned = null;
    const loaded = [];
    const walk = (e) => {
      if (!e.loaded) return;
      loaded.push(e);
      for (const k of e.kids) {
        const c = this.entries.get(k.path);
        if (c) walk(c);
      }
    };
    walk(this.root);
    if (q) {
      await Promise.all(loaded.filter((e) => (e.next || e.head) && !(e.found && e.found.query === q)).map(async (e) => {
        try {
          const r = await api.children(e.path, { limit: PAGE, contains: q });
          e.found = { query: q, kids: Tree.infos({ ...r.data, links: r.data.links }), total: r.data.children_total + (r.data.links || []).length, next: r.data.next_after ?? null };
        } catch (err) {
          this.hd.onError(err);
        }
      }));
    }
    if (this.query !== q) return null; // typed on meanwhile
    let matches = 0;
    for (const e of loaded) {
      e.start = 0;
      e.count = PAGE;
      if (e.found && e.found.query === q) matches += e.found.total;
      else if (q) matches += e.kids.filter((k) => k.name.includes(q)).length;
    }
    for (const e of loaded) this.render(e);
    return q ? { matches } : null;
  }

  /** The next page of the server's answer to the filter in @e. */
  async findMore(e) {
    const f = e.found;
    const r = await api.children(e.path, { limit: PAGE, contains: f.query, after: f.next });
    const more = Tree.infos({ ...r.data, links: [] }).filter((w) => !f.kids.some((k) => k.path === w.path));
    f.kids = f.kids.concat(more);
    f.next = r.data.next_after ?? null;
  }

  drop(e) {
    if (!e) return;
    for (const p of [...this.entries.keys()]) {
      if (isUnder(p, e.path)) this.entries.delete(p);
    }
    const wasFocused = this.focused && this.focused.path && isUnder(this.focused.path, e.path);
    e.li.remove();
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
      // a run read past the first name is read again from where it starts
      const from = e.head > 0 ? e.kids.find((k) => k.kind !== 'link') : null;
      const r = await api.children(path, { limit: Math.min(10000, Math.max(PAGE, e.kids.length)), nameFrom: from ? from.name : '' });
      const now = this.entries.get(path);
      if (now) {
        this.fill(now, r.data);
        if (this.query && now.next) await this.setFilter(this.query);
      }
    } catch (err) {
      if (err.status === 404) {
        this.drop(this.entries.get(path));
      } else {
        this.hd.onError(err);
      }
    }
  }

  async reloadRoot() {
    const r = await api.node('/', { values: '0' });
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

  /** Make the row of @path (a child of loaded @e) exist: move the
   * window to it, or look it up by name when it was not read. */
  async windowTo(e, path) {
    if (this.entries.has(path)) return;
    const list = this.shownKids(e);
    const i = list.findIndex((k) => k.path === path);
    if (i >= 0) {
      e.start = Math.max(0, i - Math.floor(PAGE / 4));
      e.count = PAGE;
      this.render(e);
      return;
    }
    if (!e.next && !e.head && !e.extra.size) return;
    const name = baseName(path);
    const r = await api.children(e.path, { limit: 50, contains: name });
    const hit = Tree.infos(r.data).find((k) => k.path === path);
    if (hit) {
      e.extra.set(path, hit);
      this.render(e);
    }
  }

  /** Open the ancestors of @path, then select and focus it. */
  async reveal(path, { focus = true, select = true } = {}) {
    const names = path.split('/').filter(Boolean);
    if (this.query) this.pinned = path;
    let cur = '/';
    for (let i = 0; i < names.length - 1; i++) {
      const parent = this.entries.get(cur);
      cur = joinPath(cur, names[i]);
      if (!this.entries.get(cur) && parent) {
        if (!parent.loaded) await this.refresh(parent.path);
        await this.windowTo(parent, cur);
        if (!this.entries.get(cur)) await this.refresh(parent.path);
        await this.windowTo(parent, cur);
      }
      const e2 = this.entries.get(cur);
      if (!e2) return false;
      if (!e2.loaded) await this.refresh(cur);
      if (!e2.expandable) this.setExpandable(e2, true);
      await this.expand(e2);
    }
    let e = this.entries.get(path);
    if (!e) {
      const parent = this.entries.get(parentPath(path));
      if (parent) {
        await this.windowTo(parent, path);
        if (!this.entries.get(path)) {
          await this.refresh(parent.path);
          await this.windowTo(parent, path);
        }
      }
      e = this.entries.get(path);
    }
    if (!e) return false;
    if (select) this.mark(e);
    this.setFocusable(e);
    if (focus) e.li.focus();
    this.scrollTo(e);
    return true;
  }

  scrollTo(e) {
    e.li.querySelector('.tree-row').scrollIntoView({ block: 'nearest' });
  }

  /** Mark @e selected, without telling anyone. */
  mark(e) {
    if (this.selected) {
      const old = this.entries.get(this.selected);
      if (old) old.li.setAttribute('aria-selected', 'false');
    }
    this.selected = e.path;
    e.li.setAttribute('aria-selected', 'true');
    this.setFocusable(e);
  }

  /** The user picked @e: ask canLeave, then select it and tell onSelect. */
  async select(e) {
    if (this.selected === e.path) {
      this.hd.onSelect(e.path, e);
      return true;
    }
    if (this.hd.canLeave && !(await this.hd.canLeave(e.path))) return false;
    if (!e.li.isConnected) return false;
    this.mark(e);
    this.hd.onSelect(e.path, e);
    return true;
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
    this.scrollTo(e);
  }

  onClick(ev) {
    const li = ev.target.closest('[role=treeitem]');
    if (!li) return;
    const e = this.entryOf(li);
    if (!e) return;
    ev.stopPropagation();
    if (e.more) {
      this.showMore(e).catch((err) => this.hd.onError(err));
      return;
    }
    if (ev.target.closest('.twisty')) {
      this.toggle(e);
      this.moveTo(e);
      return;
    }
    this.moveTo(e);
    this.select(e).then((ok) => {
      if (ok && e.expandable && !e.expanded) return this.expand(e);
      return null;
    }).catch((err) => this.hd.onError(err));
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
        if (e.more) break;
        if (e.expandable && !e.expanded) this.expand(e).catch((err) => this.hd.onError(err));
        else if (e.expanded && e.group && e.group.firstElementChild) this.moveTo(this.entryOf(e.group.firstElementChild));
        break;
      case 'ArrowLeft':
        if (e.more) this.moveTo(e.parent === this.root ? vis[0] : e.parent);
        else if (e.expanded) this.collapse(e);
        else if (e.level > 1) this.moveTo(this.entries.get(parentPath(e.path)));
        break;
      case 'Enter':
      case ' ':
        if (e.more) {
          this.showMore(e).catch((err) => this.hd.onError(err));
          break;
        }
        this.select(e).then((ok) => {
          if (ok && ev.key === 'Enter' && e.kind === 'link') this.hd.onFollow(e.target);
        });
        break;
      case '*':
        for (const s of e.li.parentElement.children) {
          const se = this.entryOf(s);
          if (se && !se.more && se.expandable) this.expand(se).catch((err) => this.hd.onError(err));
        }
        break;
      default:
        handled = ev.key.length === 1 && ev.key !== ' ' && this.typeAhead(e, ev.key, ev.timeStamp);
    }
    if (handled) {
      ev.preventDefault();
      ev.stopPropagation();
    }
  }

  /** Type-ahead from row @e: @key joins the keys typed in the last
   * second; focus moves to the first sibling (from @e on, wrapping) whose
   * name starts with them; in a group not read whole, to the server's
   * page from that name on. @return whether the key was taken. */
  typeAhead(e, key, now) {
    const parent = e.more ? e.parent : this.entries.get(parentPath(e.path));
    if (!parent || !parent.loaded) return false;
    this.typed.text = now - this.typed.at < 1000 ? this.typed.text + key : key;
    this.typed.at = now;
    const text = this.typed.text;
    const list = this.shownKids(parent);
    const from = Math.max(0, list.findIndex((k) => k.path === e.path));
    const order = list.slice(from + (text.length === 1 ? 1 : 0)).concat(list.slice(0, from + (text.length === 1 ? 1 : 0)));
    const hit = order.find((k) => k.name.startsWith(text));
    const whole = !parent.next && !parent.head && !this.query;
    if (hit || whole || this.query) {
      if (hit) this.windowTo(parent, hit.path).then(() => this.moveTo(this.entries.get(hit.path))).catch((err) => this.hd.onError(err));
      return true;
    }
    this.seek(parent, text, () => this.typed.text === text).then((k) => {
      if (k && this.typed.text === text) this.moveTo(this.entries.get(k.path));
    }).catch((err) => this.hd.onError(err));
    return true;
  }

  /** True when the tree shows @path. */
  has(path) {
    return this.entries.has(path);
  }

  nameOf(path) {
    return baseName(path);
  }

  /** The loaded nodes (not links), for the link picker. */
  knownNodes() {
    const out = [];
    const walk = (e) => {
      for (const k of e.kids) {
        if (k.kind !== 'link') out.push(k.path);
        const c = this.entries.get(k.path);
        if (c && c.loaded) walk(c);
      }
    };
    if (this.root) walk(this.root);
    return out;
  }
}
