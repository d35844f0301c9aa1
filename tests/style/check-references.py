#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The style suite's reference check: every document the tree cites is in it.

Reads every text file git knows (tracked, or new and not ignored) and
checks, one TAP line each:

1. nothing points outside the repository (../shared, reading notes, the
   old "DESIGN 8", "STYLE 12", "configfs-rules F2" forms);
2. every docs/... path named exists, a bare NAME.md in code is beside the
   file or at the top, and every relative Markdown link resolves;
3. every "docs/DESIGN.md §N" names a section of docs/DESIGN.md;
4. every "docs/STYLE.md §N" names a convention of docs/STYLE.md;
5. every rule ID cited (after "docs/configfs-rules.md rule", and in the
   comments of core/ and of the unit tests) is defined in
   docs/configfs-rules.md;
6. the table of docs/internals/rule-coverage.md is what
   scripts/rule-coverage.py prints today.

    check-references.py SOURCE_ROOT
"""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
TEXT_EXT = (".c", ".h", ".md", ".py", ".sh", ".build", ".txt", ".yaml",
            ".yml", ".json", ".js", ".mjs", ".html", ".css", ".ini", ".toml")
TEXT_NAMES = (".clang-format", ".clang-tidy", ".editorconfig", ".gitignore",
              "meson_options.txt", "run")
SKIP = ("package-lock.json", "/vendor/", "node_modules/", "tests/data/",
        "tests/style/check-references.py")  # names what it refuses
CODE_EXT = (".c", ".h", ".build", ".sh", ".yaml", ".yml")
RULE_ID = r"(?:MK|RM|RD|WR|BIN|SL|RL|UL|RN|M|F|L|D|X|C|T|U|H)\d+a?"
NOT_RULES = {"C0", "C11", "C17", "C89", "C99"}  # C standards, C0 controls


def files():
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, text=True, check=True).stdout
        names = out.split("\n")
    except (OSError, subprocess.CalledProcessError):
        names = []
        for d, dirs, fs in os.walk(ROOT):
            dirs[:] = [x for x in dirs
                       if not x.startswith(("build", ".git", "node_modules"))]
            names += [os.path.relpath(os.path.join(d, f), ROOT) for f in fs]
    for n in sorted(set(names)):
        if not n or any(s in n for s in SKIP):
            continue
        if n.endswith(TEXT_EXT) or os.path.basename(n) in TEXT_NAMES:
            path = os.path.join(ROOT, n)
            if os.path.isfile(path):
                with open(path, encoding="utf-8", errors="replace") as f:
                    yield n, f.read()


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def sections(doc, level):
    path = os.path.join(ROOT, "docs", doc)
    if not os.path.exists(path):
        return set()
    text = open(path, encoding="utf-8").read()
    return set(re.findall(r"^%s (\d+)\." % ("#" * level), text, re.M))


def rule_ids():
    path = os.path.join(ROOT, "docs", "configfs-rules.md")
    if not os.path.exists(path):
        return set()
    text = open(path, encoding="utf-8").read()
    return set(re.findall(r"^- \*\*(%s)\b" % RULE_ID, text, re.M))


OUTSIDE = [
    (re.compile(r"\.\./shared\b|/work/shared\b|\bshared/(?:DESIGN|STYLE|"
                r"configfs-rules|reading)"), "a document outside the tree"),
    (re.compile(r"(?<![\w/.-])(?:peers|style-anchors|performance-notes|"
                r"ship-and-cluster-notes)\.md"), "a reading note outside the tree"),
    (re.compile(r"(?<![\w/.])(?:DESIGN|STYLE)(?:\.md)?(?:\s*(?:\*|//|#)?\s*)"
                r"(?:§|sections?\s+)?\d"),
     'cite as "docs/DESIGN.md §N" or "docs/STYLE.md §N"'),
    (re.compile(r"(?<![\w/.-])configfs-rules(?!\.md)"),
     'cite as "docs/configfs-rules.md rule ID"'),
]
DOCS_PATH = re.compile(r"(?<![\w/.-])docs/[\w./-]*\w")
BARE_MD = re.compile(r"(?<![\w/.-])[\w-]+\.md\b")
MD_LINK = re.compile(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)")
DESIGN_REF = re.compile(r"docs/DESIGN\.md((?:[ \t\n*]*(?:§\d+|,|and|or))+)")
STYLE_REF = re.compile(r"docs/STYLE\.md((?:[ \t\n*]*(?:§\d+|,|and|or))+)")
RULE_REF = re.compile(r"docs/configfs-rules\.md,?\s+rules?\s+((?:%s"
                      r"(?:\s*(?:,|and|or|-|–)\s*)?)+)" % RULE_ID)
C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def main():
    design = sections("DESIGN.md", 2)
    style = sections("STYLE.md", 3)
    rules = rule_ids()
    problems = {k: [] for k in range(1, 7)}
    for name, text in files():
        here = os.path.dirname(name)
        for rx, why in OUTSIDE:
            for m in rx.finditer(text):
                problems[1].append(f"{name}:{line_of(text, m.start())}: "
                                   f"{m.group(0)!r}: {why}")
        for m in DOCS_PATH.finditer(text):
            p = m.group(0).rstrip(".")
            if not os.path.exists(os.path.join(ROOT, p)):
                problems[2].append(f"{name}:{line_of(text, m.start())}: "
                                   f"{p} does not exist")
        for m in (BARE_MD.finditer(text) if name.endswith(CODE_EXT) else ()):
            md = m.group(0)
            if not (os.path.exists(os.path.join(ROOT, here, md)) or
                    os.path.exists(os.path.join(ROOT, md))):
                problems[2].append(f"{name}:{line_of(text, m.start())}: "
                                   f"{md} is neither beside it nor at the top")
        if name.endswith(".md"):
            for m in MD_LINK.finditer(text):
                target = m.group(1)
                if "://" in target:
                    continue
                if not os.path.exists(os.path.join(ROOT, here, target)):
                    problems[2].append(f"{name}:{line_of(text, m.start())}: "
                                       f"link {target} does not resolve")
        for rx, known, k, doc in ((DESIGN_REF, design, 3, "DESIGN.md"),
                                  (STYLE_REF, style, 4, "STYLE.md")):
            for m in rx.finditer(text):
                for n in re.findall(r"§(\d+)", m.group(1)):
                    if n not in known:
                        problems[k].append(
                            f"{name}:{line_of(text, m.start())}: docs/{doc} "
                            f"has no §{n}")
        cited = [(m.start(), i) for m in RULE_REF.finditer(text)
                 for i in re.findall(RULE_ID, m.group(1))]
        if name.endswith((".c", ".h")) and (
                name.startswith("core/") or name.startswith("tests/unit/")):
            for c in C_COMMENT.finditer(text):
                cited += [(c.start() + m.start(), m.group(0)) for m in
                          re.finditer(r"\b%s\b" % RULE_ID, c.group(0))]
        for pos, rid in sorted(set(cited)):
            if rid not in rules and rid not in NOT_RULES:
                problems[5].append(f"{name}:{line_of(text, pos)}: rule {rid} "
                                   "is not in docs/configfs-rules.md")
    cov = os.path.join(ROOT, "docs", "internals", "rule-coverage.md")
    gen = subprocess.run([sys.executable,
                          os.path.join(ROOT, "scripts", "rule-coverage.py")],
                         capture_output=True, text=True)
    if gen.returncode != 0:
        problems[6].append("scripts/rule-coverage.py: " + gen.stderr.strip())
    elif gen.stdout.strip() not in open(cov, encoding="utf-8").read():
        problems[6].append("docs/internals/rule-coverage.md: the table differs "
                           "from scripts/rule-coverage.py's output; paste it in")
    titles = {
        1: "nothing cites a document outside the repository",
        2: "every docs/ path and Markdown link resolves",
        3: "every docs/DESIGN.md §N exists (%d sections)" % len(design),
        4: "every docs/STYLE.md §N exists (%d conventions)" % len(style),
        5: "every rule ID cited is in docs/configfs-rules.md (%d rules)"
           % len(rules),
        6: "docs/internals/rule-coverage.md is up to date",
    }
    print("1..%d" % len(titles))
    failed = 0
    for k, title in titles.items():
        if problems[k]:
            failed += 1
            print(f"not ok {k} - {title}")
            for p in problems[k][:60]:
                print("# " + p)
            if len(problems[k]) > 60:
                print("# ... and %d more" % (len(problems[k]) - 60))
        else:
            print(f"ok {k} - {title}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
