#!/usr/bin/env python3
"""Compares `qgemm bench` reports of several builds (scripts/ab.sh): per problem and M, each
build's median time and its ratio to the baseline of the same run, and the change of that ratio
against the first build. Several reports of one build (rounds) are pooled by the median.

usage: ab_compare.py [--baseline cublas-bf16] [--tolerance 0.03] NAME=REPORT.json ...
"""
import argparse
import json
import statistics
import sys
from collections import OrderedDict


def rows_of(path, baseline):
    with open(path) as f:
        report = json.load(f)
    times = {}
    for r in report["results"]:
        if r.get("status") != "ok" or r.get("median_us") is None:
            continue
        key = (r["problem"], r["weight"], r["n"], r["k"], r["m"])
        times.setdefault(key, {})[r["backend"]] = r["median_us"]
    out = OrderedDict()
    for key, by_backend in times.items():
        if baseline in by_backend:
            for backend, us in by_backend.items():
                if backend != baseline:
                    out[key + (backend,)] = (us, us / by_backend[baseline])
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default="cublas-bf16")
    parser.add_argument("--tolerance", type=float, default=0.03)
    parser.add_argument("reports", nargs="+")
    args = parser.parse_args()
    builds = OrderedDict()
    for item in args.reports:
        name, _, path = item.partition("=")
        builds.setdefault(name, []).append(rows_of(path, args.baseline))
    pooled = OrderedDict()
    for name, runs in builds.items():
        keys = OrderedDict((k, None) for run in runs for k in run)
        pooled[name] = {
            k: (statistics.median(r[k][0] for r in runs if k in r),
                statistics.median(r[k][1] for r in runs if k in r))
            for k in keys
        }
    names = list(pooled)
    first = pooled[names[0]]
    header = f"{'problem':40} {'M':>5} {'backend':8}" + "".join(
        f" {n[:14]:>14} {'ratio':>6}" for n in names) + "  change"
    print(header)
    worse = 0
    for key in first:
        line = f"{key[0][:40]:40} {key[4]:>5} {key[5][:8]:8}"
        for n in names:
            us, ratio = pooled[n].get(key, (float("nan"), float("nan")))
            line += f" {us:14.2f} {ratio:6.3f}"
        changes = []
        for n in names[1:]:
            if key in pooled[n]:
                change = pooled[n][key][1] / first[key][1] - 1
                mark = " !" if change > args.tolerance else ""
                worse += change > args.tolerance
                changes.append(f"{change * 100:+.1f}%{mark}")
        print(line + "  " + " ".join(changes))
    print(f"{worse} row(s) more than {args.tolerance * 100:.0f}% worse than {names[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
