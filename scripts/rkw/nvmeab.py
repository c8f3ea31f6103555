"""ab-nvme-report RAW [--before C] [--after C]: the table of scripts/ab-nvme.sh.

RAW holds the guest's lines (scripts/ab-nvme-guest.sh), one per sample:
`RKW-AB <round> <workload> <after|before|c> <IOPS>`. Per workload, the
median over the rounds of each round's ratios after/C, before/C and
after/before, with their smallest and largest: a ratio of two samples of
the same round, which met the same host load, never of two medians.
"""

import argparse
import statistics
import sys

from . import nvmeworkloads

WHO = ("after", "before", "c")


def parse(path):
    """{workload: {round: {who: IOPS}}}, workloads in the order first seen."""
    runs = {}
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.split()
            if len(parts) != 5 or parts[0] != "RKW-AB" or parts[3] not in WHO:
                continue
            _, rnd, wl, who, iops = parts
            runs.setdefault(wl, {}).setdefault(int(rnd), {})[who] = float(iops)
    return runs


def ratios(rounds, top, bottom):
    """top/bottom of every round that has both (and a non-zero bottom)."""
    return [r[top] / r[bottom] for r in rounds.values() if r.get(bottom) and top in r]


def cell(values):
    """'median (min-max)', or '-' with no value."""
    if not values:
        return "-"
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def report(runs, before="", after=""):
    """The Markdown table, and a line naming the two builds."""
    names = nvmeworkloads.titles()
    rows = ["| workload | rounds | after/C | before/C | after/before |", "| --- | ---: | --- | --- | --- |"]
    for wl, rounds in runs.items():
        complete = sum(1 for r in rounds.values() if all(w in r for w in WHO))
        rows.append(f"| {names.get(wl, wl)} | {complete} | {cell(ratios(rounds, 'after', 'c'))} "
                    f"| {cell(ratios(rounds, 'before', 'c'))} | {cell(ratios(rounds, 'after', 'before'))} |")
    said = f"\n(before: {before or '?'}; after: {after or '?'}; IOPS ratios, median of the rounds (min-max).)"
    return "\n".join(rows) + "\n" + said


def main(argv):
    ap = argparse.ArgumentParser(prog="ab-nvme-report", description=__doc__.split("\n\n")[0])
    ap.add_argument("raw")
    ap.add_argument("--before", default="")
    ap.add_argument("--after", default="")
    args = ap.parse_args(argv)
    runs = parse(args.raw)
    if not runs:
        print(f"ab-nvme-report: no RKW-AB line in {args.raw}", file=sys.stderr)
        return 1
    print(report(runs, args.before, args.after))
    return 0
