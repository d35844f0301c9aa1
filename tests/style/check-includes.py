#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Includes point one way inside each layer (docs/ARCHITECTURE.md), and so
do the store's calls between its generic part and its backends.

A module is a .c file and its header of the same name. Module A depends on
module B when a file of A includes B's header with #include "...". The
check fails on any cycle of such dependencies inside one folder (server/,
store/src, store/src/etcd, core/src, schema/src, cli/), naming the
modules on it: a cycle is where a change in one file can no longer be
understood without the others.

The store's calls (store/src/backend.h): a function of module A depends on
module B when it calls or names (a function pointer, the ops table) a
function or object defined in B. A module is a .c file of store/src, or a
whole backend folder (store/src/sqlite/, store/src/etcd/): calls go in any
direction inside one backend, but the generic part and a backend may not
call each other both ways, through any number of modules. The call graph
is read from the sources (comments and strings removed, function bodies
found by their braces), so it needs no compiler.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
FOLDERS = ["server", "server/configfsd", "store/src", "store/src/etcd", "core/src", "schema/src",
           "cli"]
CALLS = "store/src"
IDENT = re.compile(r"[A-Za-z_]\w*")
# comments, string and character literals, in one pass (a "//" in a string
# is no comment)
LEXEMES = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                     re.S)
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "__attribute__",
            "defined", "_Alignof", "alignof", "offsetof"}


def graph(folder):
    deps = {}
    for name in sorted(os.listdir(folder)):
        stem, ext = os.path.splitext(name)
        if ext not in (".c", ".h"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            base = os.path.basename(inc)
            other = os.path.splitext(base)[0]
            if other != stem and os.path.exists(os.path.join(folder, base)):
                deps.setdefault(stem, set()).add(other)
        deps.setdefault(stem, set())
    return deps


def cycles(deps):
    """Tarjan's strongly connected components of two or more modules."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(deps.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(deps):
        if v not in index:
            visit(v)
    return out


def strip(text):
    """@text without comments, string and character literals, and
    preprocessor lines (their line breaks kept)."""
    def blank(m):
        s = m.group(0)
        if s.startswith("/"):
            return "\n" * s.count("\n") if s.startswith("/*") else ""
        return s[0] * 2  # "" or ''

    text = LEXEMES.sub(blank, text)
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", "", text, flags=re.M)


def definitions(text):
    """(name, static, body) of each function and initialised object defined
    at file scope in @text (stripped)."""
    out, depth, start, head_from = [], 0, 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                head = text[head_from:start]
                body = text[start:i + 1]
                head_from = i + 1
                name = None
                if "=" in head:  # an object with an initialiser
                    m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*=\s*$", head)
                    name = m.group(1) if m else None
                else:
                    for m in re.finditer(r"(\w+)\s*\(", head):
                        if m.group(1) not in KEYWORDS:
                            name = m.group(1)
                            break
                if name:
                    static = re.search(r"\bstatic\b", head) is not None
                    out.append((name, static, body))
        elif ch == ";" and depth == 0:
            head_from = i + 1
    return out


def call_graph(folder):
    """Module -> modules whose functions or objects it calls or names."""
    files = []
    for dirpath, _, names in os.walk(folder):
        for name in sorted(names):
            if name.endswith(".c"):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, folder)
                module = rel.split(os.sep)[0] if os.sep in rel else rel[:-2]
                with open(path, encoding="utf-8") as f:
                    files.append((path, module, definitions(strip(f.read()))))
    public = {}
    for path, module, defs in files:
        for name, static, _ in defs:
            if not static:
                public[name] = module
    deps = {}
    for path, module, defs in files:
        local = {name for name, static, _ in defs if static}
        deps.setdefault(module, set())
        for _, _, body in defs:
            for ident in set(IDENT.findall(body)):
                if ident in local:
                    continue
                other = public.get(ident)
                if other and other != module:
                    deps[module].add(other)
    return deps


def main():
    root = sys.argv[1]
    sys.setrecursionlimit(10000)
    print(f"1..{len(FOLDERS) + 1}")
    bad = 0
    for i, folder in enumerate(FOLDERS, 1):
        path = os.path.join(root, folder)
        if not os.path.isdir(path):
            print(f"ok {i} - {folder}: no such folder # SKIP")
            continue
        deps = graph(path)
        found = cycles(deps)
        if found:
            bad += 1
            print(f"not ok {i} - {folder}: includes in a cycle")
            for comp in found:
                edges = [f"{a} -> {b}" for a in comp for b in sorted(deps[a])
                         if b in comp]
                print(f"# {', '.join(comp)}: {'; '.join(edges)}")
        else:
            print(f"ok {i} - {folder}: {len(deps)} modules, includes point one way")
    deps = call_graph(os.path.join(root, CALLS))
    found = cycles(deps)
    n = len(FOLDERS) + 1
    if found:
        bad += 1
        print(f"not ok {n} - {CALLS}: calls in a cycle (a backend counts as one module)")
        for comp in found:
            edges = [f"{a} -> {b}" for a in comp for b in sorted(deps[a]) if b in comp]
            print(f"# {', '.join(comp)}: {'; '.join(edges)}")
    else:
        print(f"ok {n} - {CALLS}: {len(deps)} modules, calls point one way")
    if "--calls" in sys.argv:
        for a in sorted(deps):
            print(f"# {a} -> {', '.join(sorted(deps[a])) or '-'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
