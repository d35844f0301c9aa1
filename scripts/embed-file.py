#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turn a file into a C source defining it as a byte array, for files the
server answers from memory (api/openapi.yaml): no path in a request ever
reaches the filesystem.

usage: embed-file.py SYMBOL INPUT OUTPUT
defines  const unsigned char SYMBOL[]  (the bytes, then a NUL)
         const size_t SYMBOL_len        (the byte count, without the NUL)
"""
import sys


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    symbol, src, dst = sys.argv[1:]
    with open(src, "rb") as f:
        data = f.read()
    lines = []
    for i in range(0, len(data), 16):
        chunk = data[i:i + 16]
        lines.append("    " + ", ".join(f"0x{b:02x}" for b in chunk) + ",")
    with open(dst, "w", encoding="ascii") as f:
        f.write(f"/* Generated from {src.rsplit('/', 1)[-1]} by "
                "scripts/embed-file.py; do not edit. */\n")
        f.write("#include <stddef.h>\n\n")
        f.write(f"extern const unsigned char {symbol}[];\n")
        f.write(f"extern const size_t {symbol}_len;\n\n")
        f.write(f"const unsigned char {symbol}[] = {{\n")
        f.write("\n".join(lines) + "\n    0x00,\n};\n")
        f.write(f"const size_t {symbol}_len = {len(data)};\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
