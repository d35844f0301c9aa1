#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The style suite's linters (docs/STYLE.md §13): clang-tidy with the
repository's .clang-tidy, or cppcheck with
tests/style/cppcheck-suppressions.txt, over the product code — the C
sources of core/src, store/src, declarative/src, server/, mount/ and cli/ as the
build compiles them (its compile_commands.json). Tests, samples and fuzz
targets are not product code and are not read. Any finding fails the
check and is printed; known false positives are suppressed in those
configuration files, each with its reason, never here. Prints TAP.

  check-lint.py tidy    SOURCE_ROOT BUILD_ROOT CLANG_TIDY
  check-lint.py cppcheck SOURCE_ROOT BUILD_ROOT CPPCHECK
"""
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys

PRODUCT = ("core/src/", "store/src/", "declarative/src/", "server/", "mount/",
           "cli/")


def product_files(root, build):
    """The product's C files that the build compiles, relative to root."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        db = json.load(f)
    files = set()
    for entry in db:
        path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
        rel = os.path.relpath(path, root)
        if rel.endswith(".c") and rel.startswith(PRODUCT):
            files.add(rel)
    return sorted(files)


def tidy(root, build, tool, files):
    """One clang-tidy per file, as many at once as there are cores."""

    def one(rel):
        r = subprocess.run([tool, "-p", build, "--quiet", rel], cwd=root,
                           capture_output=True, text=True)
        # clang-tidy prints "N warnings generated." for what it filtered
        # out of system headers: only lines naming a check are findings.
        found = [l for l in (r.stdout + r.stderr).splitlines()
                 if ": warning: " in l or ": error: " in l]
        return rel, r.returncode, found, r.stdout + r.stderr

    print(f"1..{len(files)}")
    failed = 0
    jobs = os.cpu_count() or 1
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for n, (rel, rc, found, out) in enumerate(pool.map(one, files), 1):
            if rc == 0 and not found:
                print(f"ok {n} - clang-tidy {rel}")
                continue
            failed += 1
            print(f"not ok {n} - clang-tidy {rel}")
            for line in (found or out.splitlines())[:40]:
                print(f"# {line}")
    return failed


def cppcheck(root, build, tool, files):
    """cppcheck once over the product's files, with the build's flags."""
    print("1..1")
    supp = os.path.join(root, "tests", "style", "cppcheck-suppressions.txt")
    cmd = [tool, f"--project={os.path.join(build, 'compile_commands.json')}",
           "--enable=warning,performance,portability", "--inline-suppr",
           f"--suppressions-list={supp}", "--quiet", "--error-exitcode=1",
           f"-j{os.cpu_count() or 1}",
           "--template={file}:{line}:{column}: {severity}: {message} [{id}]"]
    # cppcheck names the files as the build does, "../core/src/x.c" or
    # "core/src/x.c" by its version: match the end
    cmd += [f"--file-filter=*{f}" for f in files]
    r = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    found = [l for l in r.stderr.splitlines() if l.strip()]
    if r.returncode != 0 and not found:  # cppcheck's own error, on stdout
        found = r.stdout.splitlines()[-5:]
    if r.returncode == 0 and not found:
        print(f"ok 1 - cppcheck: {len(files)} product files, no finding")
        return 0
    print(f"not ok 1 - cppcheck: {len(found)} line(s) of findings")
    for line in found[:80]:
        print(f"# {line}")
    return 1


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("tidy", "cppcheck"):
        print(__doc__, file=sys.stderr)
        return 2
    which, root, build, tool = sys.argv[1:]
    root, build = os.path.abspath(root), os.path.abspath(build)
    if not shutil.which(tool):
        print("1..1")
        print(f"not ok 1 - {which}: {tool} is not installed "
              "(scripts/deps.sh test installs it)")
        return 1
    files = product_files(root, build)
    if not files:
        print("1..1")
        print(f"not ok 1 - {which}: no product sources in "
              f"{build}/compile_commands.json")
        return 1
    run = tidy if which == "tidy" else cppcheck
    return 1 if run(root, build, tool, files) else 0


if __name__ == "__main__":
    sys.exit(main())
