#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The style suite's formatting check (docs/STYLE.md §13): clang-format
# --dry-run --Werror with the repository's .clang-format over every .c and
# .h file git knows (tracked, or new and not ignored), or, outside a git
# checkout, every one below the source root but build directories. Any file
# clang-format would change fails the check and is named. Prints TAP.
#   check-format.sh SOURCE_ROOT [CLANG_FORMAT]
set -uo pipefail
root=${1:?usage: check-format.sh SOURCE_ROOT [CLANG_FORMAT]}
clang_format=${2:-clang-format}
cd "$root" || exit 1

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard \
                         -- '*.c' '*.h' | sort -u)
else
  mapfile -t files < <(find . \( -name 'build*' -o -name node_modules \
                                 -o -name .git \) -prune -o \
                              -type f \( -name '*.c' -o -name '*.h' \) -print \
                       | sed 's|^\./||' | sort)
fi

echo "1..1"
if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "not ok 1 - clang-format: $clang_format is not installed (scripts/deps.sh installs it)"
  exit 1
fi
existing=()
for f in "${files[@]}"; do
  [ -f "$f" ] && existing+=("$f") # a tracked file deleted in the work tree
done
if [ ${#existing[@]} -eq 0 ]; then
  echo "not ok 1 - clang-format: no C sources found below $root"
  exit 1
fi
out=$("$clang_format" --dry-run --Werror "${existing[@]}" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then
  echo "ok 1 - clang-format: ${#existing[@]} files as .clang-format wants them"
  exit 0
fi
bad=$(printf '%s\n' "$out" | sed -n 's/^\([^:]*\.[ch]\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u)
echo "not ok 1 - clang-format: $(printf '%s\n' "$bad" | grep -c .) files differ (clang-format -i FILE fixes them)"
printf '%s\n' "$bad" | sed 's/^/# differs: /'
printf '%s\n' "$out" | head -40 | sed 's/^/#   /'
exit 1
