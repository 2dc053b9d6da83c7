#!/usr/bin/env python3
"""Median us per (problem, M, backend) from several `qgemm bench` logs, side by side.
Usage: ab_table.py LOG... (columns in the order given)."""
import re
import sys

rows, order = {}, []
for col, path in enumerate(sys.argv[1:]):
    problem = None
    for line in open(path):
        if re.match(r"^\S.* x \S+ N=\d+ K=\d+", line):
            problem = line.strip()
            continue
        m = re.match(r"^\s+(\d+)\s+(\S+)\s+([\d.]+)\s", line)
        if problem and m:
            key = (problem, int(m.group(1)), m.group(2))
            if key not in rows:
                rows[key] = {}
                order.append(key)
            rows[key][col] = m.group(3)
print("problem | M | backend | " + " | ".join(sys.argv[1:]))
for key in order:
    vals = [rows[key].get(c, "-") for c in range(len(sys.argv) - 1)]
    print(f"{key[0]} | {key[1]} | {key[2]} | " + " | ".join(vals))
