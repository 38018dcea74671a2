#!/usr/bin/python3
"""Issue 28's verdict over tables of build/autoshard_bound_table.

Reads the Markdown rows the table tool prints (one file or several, e.g. one
per IPU count; '-' reads stdin) and prints, as Markdown:
- per IPU count: rows, the certified gap's median and worst (and which row),
  rows above 3% and above 10%, the longest plan + bound seconds;
- over every row: the same, and the rows whose plan + bound took more than
  the per-row limit;
- with --before FILE...: the rows whose plan (the "after" bottleneck) is
  slower than the same model's at the same IPU count in the before tables
  (by more than --slower-tolerance, default 0.05%: the table prints 0.1 us),
  and the gaps before beside after;
- with --rows: every row as a compact Markdown table (model, IPUs, plan and
  certified bound before / after in us, which bound held, gap before /
  after, plan and bound seconds), for docs/bound_table.md;
- the rows the table could not plan (its error text), and with --before the
  rows the before tables have and these lack;
- the verdict against issue 28's target: at every IPU count a median of at
  most 3% and a worst of at most 10%, at most 10 s of plan + bound a row,
  no row the table could not plan, and no plan slower than before (nor
  missing).
The median of an even count is the mean of the two middle values.

Exit code: 0 when the target is met, 1 when it is not, 2 on a usage error or
a file with no rows.

Usage: gap_summary.py [--before FILE... --] [--rows] [--max-row-seconds S] FILE...
"""
import argparse
import statistics
import sys


def parse_rows(path, failures=None):
    """{(model, ipus): row} of a table file; a row is a dict of floats. A
    row whose cells are not numbers (the table tool's row for a model it
    could not plan: its error message) goes to `failures`, keyed alike,
    with its text."""
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8")
    rows = {}
    with stream:
        for line in stream:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            # | model | IPUs | before / after | old | certified | by | old gap
            # | certified gap | plan s | bound s | chose | reason |
            if len(cells) < 3 or not cells[1].isdigit():
                continue
            try:
                after = float(cells[2].split("/")[-1])
                rows[(cells[0], int(cells[1]))] = {
                    "plan_us": after,
                    "certified_us": float(cells[4]),
                    "by": cells[5],
                    "gap_percent": float(cells[7].rstrip("%")),
                    "plan_s": float(cells[8]),
                    "bound_s": float(cells[9]),
                }
            except (ValueError, IndexError):
                if failures is not None:
                    failures[(cells[0], int(cells[1]))] = " ".join(cells[2:])
    return rows


def read_all(paths, failures=None):
    rows = {}
    for path in paths:
        rows.update(parse_rows(path, failures))
    return rows


def median(values):
    return statistics.median(values) if values else 0.0


def print_rows(rows, before):
    """Every row, sorted by model then IPUs; '-' where before has none."""
    def pair(key, field, fmt):
        now = fmt.format(rows[key][field])
        if not before:
            return now
        return (fmt.format(before[key][field]) if key in before else "-") + " / " + now
    ba = " before / after" if before else ""
    print(f"\n| model | IPUs | plan{ba} (us) | certified{ba} (us) | by | "
          f"certified gap{ba} | plan s | bound s |")
    print("|---|---|---|---|---|---|---|---|")
    for key in sorted(rows):
        r = rows[key]
        name = key[0].rsplit("/", 1)[-1] if "llama" not in key[0] else \
            "/".join(key[0].rsplit("/", 2)[-2:])
        print(f"| {name} | {key[1]} | {pair(key, 'plan_us', '{:.1f}')} | "
              f"{pair(key, 'certified_us', '{:.1f}')} | {r['by'].split(' (')[0]} | "
              f"{pair(key, 'gap_percent', '{:.1f}%')} | {r['plan_s']:.2f} | "
              f"{r['bound_s']:.2f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tables", nargs="+")
    parser.add_argument("--before", nargs="+", default=[])
    parser.add_argument("--max-row-seconds", type=float, default=10.0)
    parser.add_argument("--rows", action="store_true",
                        help="also print every row, before beside after")
    parser.add_argument("--slower-tolerance", type=float, default=0.05,
                        help="percent a plan may differ by before it counts "
                             "as slower (the table prints 0.1 us)")
    args = parser.parse_args()
    failures = {}
    rows = read_all(args.tables, failures)
    if not rows and not failures:
        print("no table rows in " + " ".join(args.tables), file=sys.stderr)
        return 2
    before = read_all(args.before)

    met = True
    print("| IPUs | rows | median gap | worst gap | worst row | > 3% | > 10% "
          "| longest plan + bound s |")
    print("|---|---|---|---|---|---|---|---|")
    counts = sorted({k for _, k in rows})
    for k in counts + [None]:
        part = {key: r for key, r in rows.items() if k is None or key[1] == k}
        if not part:
            continue
        gaps = [r["gap_percent"] for r in part.values()]
        worst_key = max(part, key=lambda key: part[key]["gap_percent"])
        longest = max(r["plan_s"] + r["bound_s"] for r in part.values())
        med, worst = median(gaps), part[worst_key]["gap_percent"]
        if k is not None and (med > 3 or worst > 10):
            met = False
        print(f"| {'all' if k is None else k} | {len(part)} | {med:.1f}% | "
              f"{worst:.1f}% | {worst_key[0]} at {worst_key[1]} | "
              f"{sum(g > 3 for g in gaps)} | {sum(g > 10 for g in gaps)} | "
              f"{longest:.2f} |")

    slow = sorted((key for key, r in rows.items()
                   if r["plan_s"] + r["bound_s"] > args.max_row_seconds),
                  key=lambda key: -(rows[key]["plan_s"] + rows[key]["bound_s"]))
    print(f"\nRows over {args.max_row_seconds:g} s of plan + bound: {len(slow)}")
    for key in slow:
        r = rows[key]
        print(f"- {key[0]} at {key[1]} IPUs: {r['plan_s']:.2f} + "
              f"{r['bound_s']:.2f} s")
    met = met and not slow

    print(f"\nRows the table could not plan: {len(failures)}")
    for key in sorted(failures):
        print(f"- {key[0]} at {key[1]} IPUs: {failures[key]}")
    met = met and not failures

    print("\nRows above 10%:")
    for key in sorted(rows, key=lambda key: -rows[key]["gap_percent"]):
        r = rows[key]
        if r["gap_percent"] <= 10:
            break
        print(f"- {key[0]} at {key[1]} IPUs: {r['gap_percent']:.1f}% "
              f"(plan {r['plan_us']:.1f} us, certified {r['certified_us']:.1f} "
              f"us by {r['by']})")

    if args.before:
        common = [key for key in rows if key in before]
        slower = [key for key in sorted(common)
                  if rows[key]["plan_us"] > before[key]["plan_us"] *
                  (1 + args.slower_tolerance / 100)]
        faster = [key for key in common
                  if rows[key]["plan_us"] < before[key]["plan_us"] *
                  (1 - args.slower_tolerance / 100)]
        print(f"\nAgainst the before tables ({len(common)} rows in both): "
              f"{len(slower)} plans slower, {len(faster)} faster; certified "
              f"gap median {median([before[key]['gap_percent'] for key in common]):.1f}% "
              f"-> {median([rows[key]['gap_percent'] for key in common]):.1f}%, "
              f"worst {max((before[key]['gap_percent'] for key in common), default=0):.1f}% "
              f"-> {max((rows[key]['gap_percent'] for key in common), default=0):.1f}%")
        for key in slower:
            print(f"- slower: {key[0]} at {key[1]} IPUs: "
                  f"{before[key]['plan_us']:.1f} -> {rows[key]['plan_us']:.1f} us")
        for key in sorted(common, key=lambda key: rows[key]["gap_percent"] -
                          before[key]["gap_percent"]):
            change = rows[key]["gap_percent"] - before[key]["gap_percent"]
            if abs(change) >= 1:
                print(f"- gap {before[key]['gap_percent']:.1f}% -> "
                      f"{rows[key]['gap_percent']:.1f}%: {key[0]} at {key[1]} IPUs")
        missing = sorted(key for key in before
                         if key not in rows and key not in failures)
        for key in missing:
            print(f"- missing now: {key[0]} at {key[1]} IPUs")
        met = met and not slower and not missing

    if args.rows:
        print_rows(rows, before)

    print("\nVerdict (issue 28: median <= 3% and worst <= 10% at every IPU "
          f"count, <= {args.max_row_seconds:g} s a row"
          + (", no plan slower" if args.before else "") + "): "
          + ("met" if met else "not met"))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
