#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Count test cases over meson testlog.json files and print the closing line.

A TAP test (cmocka with CMOCKA_MESSAGE_OUTPUT=TAP) counts each "ok" and
"not ok" line; any other test counts once. A test that crashed before it
printed its plan counts as one failure, and so does a build that failed.
"""
import json
import os
import re
import sys

passed = failed = 0
skipped = []
for path in sys.argv[1:]:
    if not os.path.exists(path):
        continue
    if path.endswith("failed-builds"):
        with open(path) as f:
            for line in f:
                if line.strip():
                    failed += 1
                    print(f"FAILED {line.strip()}")
        continue
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            try:
                t = json.loads(line)
            except ValueError:
                failed += 1  # a log cut short: say so, never crash
                print(f"FAILED {os.path.basename(path)}: unreadable line {line[:80]!r}")
                continue
            ok_result = t["result"] in ("OK", "EXPECTEDFAIL", "SKIP")
            tap_ok = tap_bad = 0
            if t.get("protocol") == "tap" or "CMOCKA" in str(t.get("env", "")):
                for l in (t.get("stdout") or "").splitlines():
                    if re.match(r"^ok \d+", l):
                        tap_ok += 1
                    elif re.match(r"^not ok \d+", l):
                        tap_bad += 1
            if tap_ok + tap_bad:
                passed += tap_ok
                failed += tap_bad
                if not ok_result and tap_bad == 0:
                    failed += 1  # died after its last case, or leaked
                    print(f"FAILED {os.path.basename(path)}: {t['name']} ({t['result']})")
            elif t["result"] == "SKIP":
                skipped.append(f"{os.path.basename(path)}: {t['name']}")
                continue
            elif ok_result:
                passed += 1
            else:
                failed += 1
                print(f"FAILED {os.path.basename(path)}: {t['name']} ({t['result']})")
# a skipped test is neither passed nor failed, but never silent
for name in skipped:
    print(f"SKIPPED {name}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
