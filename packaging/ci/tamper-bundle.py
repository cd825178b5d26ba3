#!/usr/bin/env python3
"""Writes a copy of an iopscheck bundle with one byte of its history changed: the first digit of
the first record's write_iops_formula, one up (a 9 one down), as an edited figure would be. The
other members, their order and their metadata are kept, so `iopscheck verify` must find the
edit by the history's hashes alone.

usage: tamper-bundle.py BUNDLE OUT
"""
import io
import re
import sys
import tarfile


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    src, dst = argv
    with tarfile.open(src, "r:gz") as t:
        members = [(m, t.extractfile(m).read() if m.isfile() else None) for m in t.getmembers()]
    edited = None
    with tarfile.open(dst, "w:gz") as out:
        for m, data in members:
            if data is not None and edited is None and m.name.endswith("/history.jsonl"):
                found = re.search(rb'"write_iops_formula":([1-9])', data)
                if found:
                    i = found.start(1)
                    d = data[i]
                    data = data[:i] + bytes([d - 1 if d == ord("9") else d + 1]) + data[i + 1:]
                    edited = f"{m.name}: byte {i}, {chr(d)} -> {chr(data[i])}"
            out.addfile(m, io.BytesIO(data) if data is not None else None)
    if edited is None:
        print(f"tamper-bundle.py: {src}: no history.jsonl with a write_iops_formula", file=sys.stderr)
        return 2
    print(edited)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
