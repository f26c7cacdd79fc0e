"""Reads a suite run (bench_suite.py's JSON) and says where kfuse stands.

    python3 bench/compare.py NEW.json [--before OLD.json] [--slack 0.005]

Prints, per workload of issue 4's table (and the others the suite measures):
kfuse's time and fraction of the copy bandwidth, the issue's target for it,
and whether it is met (fraction at the target, and kfuse faster than torch
eager and torch.compile, both timed per call); then each strategy variant
(`name__variant`) against its workload's default, marking the variants
faster by more than `--slack` (a fraction: 0.005 = 0.5%), the candidates
for a new default (and for `name__tuned`, kfuse.autotune's variants, the
one the runtime chose on that GPU); with `--before`, each workload's kfuse time against the
earlier run. Only reads JSON: runs anywhere (no torch, no GPU)."""

import argparse
import json
import math
import sys

# issue 4's targets (fractions of the measured copy bandwidth)
ELEMENTWISE = ("ew_chain", "bias_gelu", "relu_bn_add_relu")
ROW_TARGET, WIDE_TARGET, ELEMENTWISE_TARGET = 0.94, 0.90, 0.96
ISSUE_TABLE = (list(ELEMENTWISE) + ["l2norm", "softmax", "layernorm", "rmsnorm_silu",
                                    "softmax_xent"] +
               [f"softmax_w{w}" for w in (256, 1024, 4096, 32768, 262144)])


def target(name: str) -> float:
    """The issue's fraction of copy bandwidth for workload `name`."""
    if name in ELEMENTWISE:
        return ELEMENTWISE_TARGET
    return WIDE_TARGET if name == "softmax_w262144" else ROW_TARGET


def verdict(row: dict) -> tuple:
    """(met, reasons not met) for one workload's row of the JSON."""
    name_target = row["_target"]
    why = []
    if not row["kfuse_frac"] >= name_target:
        why.append(f"{row['kfuse_frac']:.3f} < {name_target:.2f} of copy BW")
    for peer, key in (("eager", "eager"), ("torch.compile", "compile")):
        theirs = row.get(f"{key}_us")
        if theirs is not None and not math.isnan(theirs) and not row["kfuse_us"] < theirs:
            # (runs that took turns with the peers say in how many rounds kfuse led)
            ahead = row.get(f"ahead_of_{key}_rounds")
            rounds = len(row.get("rounds_us", {}).get("kfuse", ()))
            led = f", ahead in {ahead} of {rounds} rounds" if ahead is not None else ""
            why.append(f"not faster than {peer} ({row['kfuse_us']:.1f} vs {theirs:.1f} us"
                       f"{led})")
    return not why, why


def compare(new: dict, before: dict = None, slack: float = 0.005) -> tuple:
    """The report's lines and the number of issue-table workloads that miss a
    target (those absent from the run count as missed)."""
    rows = new["workloads"]
    lines = [f"# {new.get('device', '?')}, {new.get('date', '?')}, copy "
             f"{new.get('copy_GBps', float('nan')):.0f} GB/s",
             "",
             "| workload | kfuse us | kfuse/copy BW | target | eager us | compile us | met |",
             "|---|---:|---:|---:|---:|---:|---|"]
    missed = 0
    bases = [n for n in rows if "__" not in n]
    for name in ISSUE_TABLE + [n for n in bases if n not in ISSUE_TABLE]:
        row = rows.get(name)
        if row is None:
            if name in ISSUE_TABLE:
                missed += 1
                lines.append(f"| {name} | - | - | {target(name):.2f} | - | - | not run |")
            continue
        row = dict(row, _target=target(name))
        ok, why = verdict(row)
        if name in ISSUE_TABLE and not ok:
            missed += 1
        lines.append(f"| {name} | {row['kfuse_us']:.1f} | {row['kfuse_frac']:.3f} | "
                     f"{row['_target']:.2f} | {row.get('eager_us', float('nan')):.1f} | "
                     f"{row.get('compile_us', float('nan')):.1f} | "
                     f"{'yes' if ok else 'NO: ' + '; '.join(why)} |")
    variants = sorted(n for n in rows if "__" in n)
    if variants:
        lines += ["", "| variant | kfuse us | default us | change | |", "|---|---:|---:|---:|---|"]
        for name in variants:
            base = rows.get(name.split("__")[0])
            if base is None:
                lines.append(f"| {name} | {rows[name]['kfuse_us']:.1f} | - | - | no default run |")
                continue
            # (the default timed in turn with the variant, where the run did)
            t, t0 = rows[name]["kfuse_us"], rows[name].get("default_us", base["kfuse_us"])
            change = t / t0 - 1
            mark = "faster than the default" if change < -slack else ""
            if rows[name].get("tuned_choice"):
                # (kfuse.autotune's variants: which the runtime kept on this GPU)
                mark = "; ".join(m for m in (mark, f"the runtime chose "
                                                   f"{rows[name]['tuned_choice']}") if m)
            lines.append(f"| {name} | {t:.1f} | {t0:.1f} | {change:+.1%} | {mark} |")
    if before is not None:
        old = before["workloads"]
        lines += ["", f"| workload | kfuse us now | before ({before.get('date', '?')[:10]}) | "
                      "change |", "|---|---:|---:|---:|"]
        for name in bases:
            if name in old:
                t, t0 = rows[name]["kfuse_us"], old[name]["kfuse_us"]
                lines.append(f"| {name} | {t:.1f} | {t0:.1f} | {t / t0 - 1:+.1%} |")
    lines += ["", f"issue-table workloads missing a target: {missed} of {len(ISSUE_TABLE)}"]
    return lines, missed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run", help="bench_suite.py's JSON")
    ap.add_argument("--before", help="an earlier run's JSON to compare kfuse's times with")
    ap.add_argument("--slack", type=float, default=0.005,
                    help="a variant this much faster than the default is marked (fraction)")
    args = ap.parse_args(argv)
    try:
        with open(args.run) as f:
            new = json.load(f)
        before = None
        if args.before:
            with open(args.before) as f:
                before = json.load(f)
    except (OSError, ValueError) as e:
        print(f"compare.py: cannot read a suite run: {e}", file=sys.stderr)
        return 2
    for run, path in ((new, args.run), (before, args.before)):
        if run is not None and not isinstance(run.get("workloads"), dict):
            print(f"compare.py: {path} has no 'workloads' table (not bench_suite.py's JSON)",
                  file=sys.stderr)
            return 2
    lines, _ = compare(new, before, args.slack)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
