// SPDX-License-Identifier: MIT
// dom.js - the few DOM helpers the editor uses. Everything is built with
// createElement and textContent: no innerHTML (values are user data), no
// inline style (the server's CSP forbids it; state is shown with classes).

let nextId = 0;

/** A fresh id for label/aria wiring. */
export function uid(prefix = 'id') {
  nextId += 1;
  return `${prefix}-${nextId}`;
}

/**
 * h('button', {class: 'x', onclick: fn, 'aria-label': 'y'}, 'text', child)
 * Attributes: `class`, `text`, `on<event>` functions, `dataset` object,
 * booleans (true sets an empty attribute, false/null/undefined omits it),
 * anything else through setAttribute. Children: nodes, strings, arrays,
 * null/false (skipped).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value' && 'value' in el) el.value = v;
    else if (k === 'checked' || k === 'selected' || k === 'disabled' || k === 'readOnly') el[k] = Boolean(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

/** Remove all children of @el, then append @children. */
export function replaceChildren(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/** The parent config path of @path ('/a/b' -> '/a', '/a' -> '/'). */
export function parentPath(path) {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/** The last name of @path. */
export function baseName(path) {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Join a config path and a name. */
export function joinPath(dir, name) {
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}

/** True when @path is @prefix or below it. */
export function isUnder(path, prefix) {
  return prefix === '/' || path === prefix || path.startsWith(`${prefix}/`);
}
