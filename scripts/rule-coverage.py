#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print the rule -> unit test table of docs/internals/rule-coverage.md.

Reads the comment above each test_* function in tests/unit/test-core-*.c,
collects the docs/configfs-rules.md IDs it cites, and prints one Markdown
row per rule of sections 1, 3, 4 and 5, with a short title taken from
docs/configfs-rules.md:

    scripts/rule-coverage.py > table.md

It fails when a test cites an ID the rules document does not define.
"""
import collections
import glob
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FAMILIES = [("M", 25), ("L", 5), ("D", 5), ("MK", 14), ("RM", 14),
            ("RD", 7), ("WR", 9), ("BIN", 8), ("SL", 10), ("RL", 3),
            ("UL", 4), ("RN", 2), ("C", 12), ("T", 10)]
ID = re.compile(r"\b(MK|RM|RD|WR|BIN|SL|RL|UL|RN|M|L|D|C|T)(\d+)(a?)\b")
TEST = re.compile(r"/\*((?:(?!\*/).)*?)\*/\s*static void (test_\w+)\(void \*\*state\)",
                  re.S)


def rule_ids():
    for prefix, n in FAMILIES:
        for i in range(1, n + 1):
            yield f"{prefix}{i}"
            if prefix == "RM" and i == 7:
                yield "RM7a"


RULES = os.path.join(ROOT, "docs", "configfs-rules.md")


def titles(path):
    out = {}
    text = open(path, encoding="utf-8").read()
    for m in re.finditer(r"^- \*\*([A-Z]+\d+a?)(?: \[VFS\])?\*\*\s*(.*)$", text, re.M):
        out[m.group(1)] = m.group(2)
    for m in re.finditer(r"^- \*\*([A-Z]+\d+a?) ([^*]+)\*\*", text, re.M):
        out[m.group(1)] = m.group(2).rstrip(".")
    return out


def short(text):
    text = re.sub(r"\*\*|`", "", text)
    text = text.split(". ")[0]
    return (text[:70] + "...") if len(text) > 73 else text


def main():
    cited = collections.defaultdict(set)
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/unit/test-core-*.c"))):
        src = open(path, encoding="utf-8").read()
        for m in TEST.finditer(src):
            for rid in ID.finditer(m.group(1)):
                cited["".join(rid.groups())].add(m.group(2))
    names = titles(RULES)
    unknown = sorted(set(cited) - set(names))
    if unknown:
        sys.exit("rule IDs cited by tests but not in docs/configfs-rules.md: "
                 + ", ".join(unknown))
    print("| rule | what | tests |")
    print("|---|---|---|")
    for rid in rule_ids():
        tests = ", ".join(f"`{t}`" for t in sorted(cited.get(rid, ())))
        print(f"| {rid} | {short(names.get(rid, ''))} | {tests or 'not applicable (below)'} |")


if __name__ == "__main__":
    main()
