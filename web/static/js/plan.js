// SPDX-License-Identifier: MIT
// plan.js - lists of operations shown before they run: the plan of
// "delete this subtree" (links first, then children bottom-up, one batch)
// and the dry-run plan of an import, each as a readable diff.

import { api } from './api.js';
import { h, joinPath, parentPath, baseName } from './dom.js';

export const BATCH_MAX = 1000;

/**
 * The operations that remove the subtree at @node (a Node read with a
 * depth that reaches its leaves), in the order configfs allows: every
 * link in it first (a link holds its target: EBUSY), then the committed
 * (live) items are uncommitted (configfs refuses to remove a live item),
 * then the folders bottom-up; default groups go with their parent.
 */
export function deleteOps(node) {
  const unlinks = [];
  const renames = [];
  const rmdirs = [];
  const walk = (n, path) => {
    for (const l of n.links || []) unlinks.push({ op: 'unlink', path: joinPath(path, l.name), target: l.target });
    for (const c of n.children || []) {
      let cp = joinPath(path, c.name);
      if (c.live && baseName(path) === 'live') {
        const to = joinPath(joinPath(parentPath(path), 'pending'), c.name);
        renames.push({ op: 'rename', from: cp, to });
        cp = to;
      }
      walk(c, cp);
    }
    if (!n.default_group && n.kind !== 'subsystem' && n.kind !== 'root') rmdirs.push({ op: 'rmdir', path, kind: n.kind });
  };
  walk(node, node.path);
  return [...unlinks, ...renames, ...rmdirs];
}

/** Whether a node read with ?depth= left children out somewhere: the
 * server caps one answer at 10000 children, and a node that did not fit
 * holds a page of them (children_total above what it lists). */
export function isPartial(node) {
  if (node.children_total !== undefined && node.children_total > (node.children || []).length) return true;
  return (node.children || []).some((c) => isPartial(c));
}

/** The ops of @ops as the batch API takes them (without the extra keys). */
export function batchOps(ops) {
  return ops.map((o) => {
    if (o.op === 'rename') return { op: 'rename', from: o.from, to: o.to };
    if (o.op === 'store') return o.encoding ? { op: 'store', path: o.path, value: o.value, encoding: o.encoding } : { op: 'store', path: o.path, value: o.value };
    if (o.op === 'symlink') return { op: 'symlink', path: o.path, target: o.target };
    return { op: o.op, path: o.path };
  });
}

const trimNl = (s) => (typeof s === 'string' ? s.replace(/\n$/, '') : s);

/**
 * One line per operation: + made, − removed, ~ a value (old → new when
 * @old has it: path -> old value), → a link, ⇄ a commit or uncommit.
 * @navigate(path), when given, turns paths into jump links.
 */
export function planList(ops, { old = new Map(), navigate = null } = {}) {
  const ref = (p) => (navigate ? h('button', { type: 'button', class: 'linkish', title: p, onclick: () => navigate(p) }, p) : h('code', { title: p }, p));
  const list = h('ol', { class: 'plan' });
  for (const o of ops) {
    let li;
    switch (o.op) {
      case 'mkdir':
        li = h('li', { class: 'op-add' }, '+ create ', ref(o.path));
        break;
      case 'rmdir':
        li = h('li', { class: 'op-del' }, `− delete ${o.kind || ''} `.replace('  ', ' '), ref(o.path));
        break;
      case 'unlink':
        li = h('li', { class: 'op-del' }, '− remove link ', ref(o.path), o.target ? ` → ${o.target}` : null);
        break;
      case 'symlink':
        li = h('li', { class: 'op-add' }, '+ link ', ref(o.path), ` → ${o.target}`);
        break;
      case 'rename':
        li = h('li', { class: 'op-set' }, `⇄ ${baseName(parentPath(o.to)) === 'live' ? 'commit' : 'uncommit'} `, ref(o.from), ` → ${o.to}`);
        break;
      case 'store': {
        const was = old.get(o.path);
        li = h('li', { class: 'op-set' }, '~ set ', ref(o.path), ': ', was !== undefined ? [h('del', {}, trimNl(was)), ' → '] : null, h('ins', {}, o.encoding === 'base64' ? `(base64) ${o.value}` : trimNl(o.value)));
        break;
      }
      default:
        li = h('li', {}, `${o.op} `, ref(o.path || ''));
    }
    li.dataset.op = o.op;
    list.append(li);
  }
  return list;
}

/** Counts by kind: "2 links removed, 5 deleted". */
export function planSummary(ops) {
  const n = (op) => ops.filter((o) => o.op === op).length;
  const parts = [];
  const add = (k, one, many) => {
    if (k) parts.push(`${k} ${k === 1 ? one : many}`);
  };
  add(n('mkdir'), 'to create', 'to create');
  add(n('symlink'), 'link to make', 'links to make');
  add(n('store'), 'value to set', 'values to set');
  add(n('rename'), 'commit or uncommit', 'commits or uncommits');
  add(n('unlink'), 'link to remove', 'links to remove');
  add(n('rmdir'), 'folder to delete', 'folders to delete');
  return parts.length ? parts.join(', ') : 'nothing to do';
}

/** The current values of the attributes an import plan stores (the first
 * 50 whose item exists already), for the diff. */
export async function oldValues(ops) {
  const made = new Set(ops.filter((o) => o.op === 'mkdir').map((o) => o.path));
  const want = ops.filter((o) => o.op === 'store' && !made.has(parentPath(o.path))).slice(0, 50);
  const old = new Map();
  await Promise.all(want.map(async (o) => {
    try {
      const r = await api.attribute(o.path);
      if (r.data && r.data.value !== undefined) old.set(o.path, r.data.value);
    } catch {
      /* a value that cannot be read shows only the new one */
    }
  }));
  return old;
}
