#!/usr/bin/env python3
"""Where a kernel's warps wait, per SASS instruction, from Nsight Compute's source page.

Input: the CSV of `ncu --set full --import-source no --page source --print-source sass --csv`
(`scripts/device_run.sh ncusrc` writes one per case). Prints the instructions with the most
warp-stall samples and their top stall reasons, the reasons over the whole kernel, and the
samples grouped by execution count: code run once per warp (prologue, epilogue) separates from
the K loop (run once per stage per warp) that way.

Usage: scripts/sass_stalls.py FILE.csv [TOP=40]
"""
import collections
import csv
import sys


def number(text):
    try:
        return float(text.replace(',', ''))
    except ValueError:
        return 0.0


def main():
    rows = list(csv.reader(open(sys.argv[1])))
    top_n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    start = next(i for i, r in enumerate(rows) if r and r[0] == 'Address')
    header, data = rows[start], rows[start + 1:]
    col = {name: j for j, name in enumerate(header)}
    samples_col, executed_col = col['Warp Stall Sampling (All Samples)'], col['Instructions Executed']
    reasons = [n for n in header if n.startswith('stall_') and '(Not' not in n]
    total = sum(number(r[samples_col]) for r in data) or 1.0
    print(f'{total:.0f} samples over {len(data)} instructions')
    for r in sorted(data, key=lambda r: -number(r[samples_col]))[:top_n]:
        s = number(r[samples_col])
        top = sorted(((number(r[col[n]]), n[6:]) for n in reasons), reverse=True)[:3]
        why = ' '.join(f'{n}:{100 * v / max(s, 1):.0f}%' for v, n in top if v > 0)
        print(f'{r[0]:>14} {100 * s / total:5.1f}% x{number(r[executed_col]):>9.0f}  {r[1][:60]:60} {why}')
    by_reason = collections.Counter()
    for r in data:
        for n in reasons:
            by_reason[n[6:]] += number(r[col[n]])
    print('reasons: ' + ' '.join(f'{k}:{100 * v / total:.1f}%' for k, v in by_reason.most_common() if v))
    print('samples by execution count (instructions, share of samples):')
    groups = collections.defaultdict(lambda: [0, 0.0])
    for r in data:
        g = groups[number(r[executed_col])]
        g[0] += 1
        g[1] += number(r[samples_col])
    for executed, (count, s) in sorted(groups.items(), key=lambda kv: -kv[1][1])[:12]:
        print(f'  executed {executed:>9.0f}: {count:5d} instructions, {100 * s / total:5.1f}%')


if __name__ == '__main__':
    main()
