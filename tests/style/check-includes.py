#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Includes point one way inside each layer (docs/ARCHITECTURE.md).

A module is a .c file and its header of the same name. Module A depends on
module B when a file of A includes B's header with #include "...". The
check fails on any cycle of such dependencies inside one folder (server/,
store/src, core/src, declarative/src, cli/), naming the modules on it: a
cycle is where a change in one file can no longer be understood without
the others.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
FOLDERS = ["server", "store/src", "core/src", "declarative/src", "cli"]


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


def main():
    root = sys.argv[1]
    sys.setrecursionlimit(10000)
    print(f"1..{len(FOLDERS)}")
    bad = 0
    for i, folder in enumerate(FOLDERS, 1):
        path = os.path.join(root, folder)
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
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
