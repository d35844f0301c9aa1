// SPDX-License-Identifier: MIT
// picker.js - the link picker: a combobox (WAI-ARIA APG "combobox with
// list autocomplete") over the nodes a link may point at: those of the
// types the schema's links.allow names, found by reading the subsystem as
// deep as those types sit, plus the nodes the tree has loaded when the
// subsystem has no schema (then only the subsystem knows what it takes).

import { api } from './api.js';
import { h, uid, baseName } from './dom.js';

const MAX_OPTIONS = 50;

/** How deep under the subsystem's root the first of @types can sit (BFS
 * over creates, default groups and committable forms); null if nowhere. */
export function depthOf(desc, types) {
  const want = new Set(types);
  const best = new Map([[desc.root, 0]]);
  const queue = [desc.root];
  while (queue.length) {
    const t = queue.shift();
    const d = best.get(t);
    if (want.has(t)) return d;
    const st = desc.types[t];
    if (!st || d >= 12) continue;
    const next = [];
    if (st.creates) next.push([st.creates.type, d + 1]);
    for (const g of Object.values(st.default_groups || {})) next.push([g, d + 1]);
    // a committable item sits under pending/ or live/: two levels down
    if (st.committable) next.push([st.committable.type, d + 2]);
    for (const [nt, nd] of next) {
      if (!best.has(nt)) {
        best.set(nt, nd);
        queue.push(nt);
      }
    }
  }
  return null;
}

/** The paths of the nodes of @types under /@subsystem (as many as one
 * answer holds: the server caps it at 10000 children over all levels,
 * plenty for a typeahead that shows 50). */
export async function candidatesOf(subsystem, desc, types) {
  const d = depthOf(desc, types);
  if (d === null) return [];
  const r = await api.node(`/${subsystem}`, { depth: String(Math.max(1, d)), values: '0' });
  const out = [];
  const walk = (n) => {
    if (n.type && types.includes(n.type) && n.kind !== 'link') out.push(n.path);
    for (const c of n.children || []) walk(c);
  };
  walk(r.data);
  return out;
}

/**
 * A combobox input over the candidate paths @load() resolves to (loaded on
 * first focus). With @makers (async () -> the groups that make such a
 * target) and @onCreate(dir, name), a typed name no candidate has is also
 * offered as "Create NAME in DIR and link it" (one option per group, the
 * first few), which calls onCreate when picked. Returns {root, input,
 * resolve(text) -> {path} | {error}, reset()}.
 */
export function linkPicker({ id, describedBy, load, what, makers = null, onCreate = null, nameOk = () => true }) {
  const listId = uid('opts');
  const input = h('input', {
    id,
    type: 'text',
    role: 'combobox',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-autocomplete': 'list',
    'aria-expanded': 'false',
    'aria-controls': listId,
    'aria-describedby': describedBy,
    placeholder: 'type a name or a path',
  });
  const list = h('ul', { id: listId, role: 'listbox', 'aria-label': `Targets${what ? ` (${what})` : ''}`, hidden: true });
  let all = null;
  let loading = null;
  let makerDirs = null; // the groups a new target can be made in
  let makersLoading = null;
  let active = -1;
  const ensure = () => {
    if (!loading) {
      loading = Promise.resolve(load()).then((paths) => {
        all = [...new Set(paths)].sort();
        return all;
      }, (e) => {
        loading = null;
        throw e;
      });
    }
    return loading;
  };
  const ensureMakers = () => {
    if (!makers) return Promise.resolve([]);
    if (!makersLoading) {
      makersLoading = Promise.resolve(makers()).then((dirs) => {
        makerDirs = dirs;
        return dirs;
      }, (e) => {
        makersLoading = null;
        throw e;
      });
    }
    return makersLoading;
  };
  const close = () => {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  };
  const matches = (q) => {
    const t = q.trim().toLowerCase();
    return (all || []).filter((p) => p.toLowerCase().includes(t));
  };
  const setActive = (i) => {
    const opts = [...list.children];
    if (!opts.length) return;
    active = (i + opts.length) % opts.length;
    opts.forEach((o, k) => o.setAttribute('aria-selected', String(k === active)));
    input.setAttribute('aria-activedescendant', opts[active].id);
    opts[active].scrollIntoView({ block: 'nearest' });
  };
  const pick = (p) => {
    input.value = p;
    close();
    input.dispatchEvent(new Event('change'));
  };
  const open = async () => {
    await ensure().catch(() => null);
    const name = input.value.trim();
    // a bare name no candidate has: offer to make it (where it may be made)
    const creatable = onCreate && name && !name.includes('/') && nameOk(name) && !(all || []).some((p) => baseName(p) === name);
    if (creatable) await ensureMakers().catch(() => null);
    if (input.value.trim() !== name) return; // typed on meanwhile
    const found = matches(input.value);
    list.replaceChildren();
    for (const p of found.slice(0, MAX_OPTIONS)) {
      list.append(h('li', { id: uid('opt'), role: 'option', 'aria-selected': 'false', title: p, dataset: { path: p }, onmousedown: (e) => {
        e.preventDefault();
        pick(p);
      } }, p));
    }
    if (!found.length && !(creatable && makerDirs && makerDirs.length)) list.append(h('li', { role: 'option', 'aria-disabled': 'true', 'aria-selected': 'false', class: 'muted' }, all && all.length ? 'No target matches' : `No ${what || 'target'} exists yet`));
    else if (found.length > MAX_OPTIONS) list.append(h('li', { role: 'option', 'aria-disabled': 'true', 'aria-selected': 'false', class: 'muted' }, `${found.length - MAX_OPTIONS} more: type more of the name`));
    if (creatable) {
      for (const dir of (makerDirs || []).slice(0, 3)) {
        const text = `Create ${name} in ${dir} and link it`;
        list.append(h('li', { id: uid('opt'), role: 'option', class: 'create-option', 'aria-selected': 'false', title: text, dataset: { create: dir, name }, onmousedown: (e) => {
          e.preventDefault();
          create(dir, name);
        } }, h('span', { class: 'create-mark', 'aria-hidden': 'true' }, '+ '), text));
      }
    }
    list.hidden = false;
    input.setAttribute('aria-expanded', 'true');
    active = -1;
  };
  const create = (dir, name) => {
    close();
    Promise.resolve(onCreate(dir, name)).then((ok) => {
      if (ok) reset();
    });
  };
  input.addEventListener('focus', () => open());
  input.addEventListener('input', () => open());
  input.addEventListener('blur', () => close());
  input.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown') {
      e.preventDefault();
      if (list.hidden) open();
      else setActive(active + 1);
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      setActive(active - 1);
    } else if (e.key === 'Enter' && !list.hidden) {
      // the active option; or, with none active, the only one left
      const paths = [...list.children].filter((o) => o.dataset.path);
      const o = active >= 0 ? list.children[active] : paths.length === 1 && input.value.trim() && input.value !== paths[0].dataset.path ? paths[0] : null;
      if (o && o.dataset.create) {
        e.preventDefault();
        create(o.dataset.create, o.dataset.name);
      } else if (o && o.dataset.path) {
        e.preventDefault();
        pick(o.dataset.path);
      } else {
        close(); // the form submits: its error must not hide under the list
      }
    } else if (e.key === 'Escape' && !list.hidden) {
      e.preventDefault();
      e.stopPropagation();
      close();
    }
  });
  /** The path @text names: a path as it is, or a name one candidate has. */
  const resolve = async (text) => {
    const t = text.trim();
    if (t === '') return { error: 'choose a target' };
    if (t.startsWith('/')) return { path: t.replace(/\/+$/, '') };
    await ensure().catch(() => null);
    const byName = (all || []).filter((p) => baseName(p) === t);
    if (byName.length === 1) return { path: byName[0] };
    if (byName.length > 1) return { error: `${byName.length} targets are named ${t}: pick one from the list (${byName.slice(0, 3).join(', ')})` };
    return { error: `no ${what || 'target'} is named ${t}: type part of its name and pick it from the list, or give its absolute path` };
  };
  function reset() {
    all = null;
    loading = null;
    makerDirs = null;
    makersLoading = null;
  }
  return { root: h('div', { class: 'combo' }, input, list), input, resolve, reset };
}
