#!/usr/bin/python3
"""Instruction counts per operation from bench/instructions runs (bench/README.md, "Issue 14 check").

analyze.py summary OUT_DIR [--nodes N]
    Every run OUT_DIR/<label>-<k>/: callgrind Ir per connect+register (connect dump / N, and / the
    TLS connections accepted inside it: N plus redials, counted as calls of SSL_new), per fan-out
    push (fanout dump / 3N) and per forwarded request (saturation dump / the forwarded calls answered
    inside it); then per label the median over its runs, and the ratio of the second label to the first
    (the labels in the order OUT_DIR/labels lists them). Also writes OUT_DIR/summary.json.
analyze.py diff RUN_A RUN_B PHASE [--nodes N] [--top K]
    Self Ir per operation by function (callgrind_annotate), B minus A, largest first: where a
    difference comes from.

The forwarded calls are counted by callgrind itself: the calls of --request-function (default
CloudlyConnector::finishCall, which completes every call the relay made to Cloudly, a forwarded
request included) recorded in the saturation dump.
"""
import argparse
import collections
import glob
import json
import os
import re
import statistics
import subprocess
import sys

DEFAULT_REQUEST_FUNCTION = "coreflow::CloudlyConnector::finishCall("
FANOUT_ROUNDS = 3  # the harness pushes to all N nodes three times and reports the median


def dumps(run):
    """{phase: path} of a run's callgrind dumps, named by the trigger phases.py gave them."""
    out = {}
    for path in glob.glob(os.path.join(run, "cg.out.*")):
        with open(path, errors="replace") as f:
            for line in f:
                m = re.match(r"^desc: Trigger: .*dump (\w+)", line)
                if m:
                    out[m.group(1)] = path
                    break
                if line.startswith("fn="):
                    break
    return out


def total_ir(path):
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"^(?:totals|summary): (\d+)", line)
            if m:
                return int(m.group(1))
    raise ValueError(f"{path}: no totals line")


def calls_of(path, function, exact=False):
    """Sum of the calls recorded to every function whose name contains (exact: is) `function`."""
    names, calls, callee = {}, collections.Counter(), None
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if m:
                kind, ident, name = m.groups()
                if name:
                    names[ident] = name
                callee = ident if kind == "cfn" else None
                continue
            if line.startswith("calls=") and callee is not None:
                calls[callee] += int(line.split("=", 1)[1].split()[0])
                callee = None
    match = (lambda name: name == function) if exact else (lambda name: function in name)
    return sum(n for ident, n in calls.items() if match(names.get(ident, "")))


def redials(run):
    try:
        with open(os.path.join(run, "harness.log"), errors="replace") as f:
            return sum(1 for line in f if "closed unexpectedly" in line or "registration refused" in line)
    except OSError:
        return 0


def divisors(run, phases, nodes, request_function):
    # A node whose handshake the (slow, instrumented) relay let time out redials: one more TLS
    # handshake (often cut short) and registration. "connect" is per node (N), "accepted" the same dump
    # per TLS connection the relay accepted (calls of SSL_new): the two agree when nobody redialled.
    accepted = calls_of(phases["connect"], "SSL_new", exact=True)
    return {"connect": nodes, "accepted": accepted or nodes, "fanout": FANOUT_ROUNDS * nodes,
            "saturation": calls_of(phases["saturation"], request_function)}


def per_operation(run, nodes, request_function):
    phases = dumps(run)
    if not all(p in phases for p in ("connect", "fanout", "saturation")):
        return None
    div = divisors(run, phases, nodes, request_function)
    row = {p: total_ir(phases[p]) / div[p] for p in ("connect", "fanout", "saturation") if div[p] > 0}
    row["perAccepted"] = total_ir(phases["connect"]) / div["accepted"]
    row["requests"] = div["saturation"]
    row["accepted"] = div["accepted"]
    row["redials"] = redials(run)
    return row


FIGURES = [("saturation", "forwarded request", 1e3, "k"), ("fanout", "fan-out push", 1e3, "k"),
           ("connect", "connect + register", 1e6, "M"), ("perAccepted", "connect + register per accepted TLS connection", 1e6, "M")]


def summary(args):
    labels_file = os.path.join(args.out, "labels")
    labels = open(labels_file).read().split() if os.path.exists(labels_file) else None
    rows = collections.defaultdict(list)
    runs = [r for r in glob.glob(os.path.join(args.out, "*-*")) if os.path.isdir(r) and r.rsplit("-", 1)[1].isdigit()]
    for run in sorted(runs, key=lambda r: (r.rsplit("-", 1)[0], int(r.rsplit("-", 1)[1]))):
        label = os.path.basename(run).rsplit("-", 1)[0]
        row = per_operation(run, args.nodes, args.request_function)
        if row is None:
            print(f"{os.path.basename(run)}: incomplete (a phase dump is missing), left out")
            continue
        rows[label].append(row)
        print(f"{os.path.basename(run)}: " + ", ".join(f"{name} {row[k] / scale:.2f} {unit}" for k, name, scale, unit in FIGURES)
              + f" Ir ({row['requests']} forwarded requests, {row['accepted']} TLS connections accepted during connect,"
              f" {row['redials']} redials or refusals)")
    labels = labels or sorted(rows)
    medians = {label: {k: statistics.median(r[k] for r in rows[label]) for k, *_ in FIGURES} for label in labels if rows[label]}
    result = {"nodes": args.nodes, "runs": rows, "medians": medians}
    if len(medians) == 2:
        before, after = labels
        result["ratios"] = {k: medians[after][k] / medians[before][k] for k, *_ in FIGURES}
        print(f"\n| figure (N = {args.nodes}, Ir per operation) | {before}: median | {after}: median | {after} / {before} |")
        print("| --- | --- | --- | --- |")
        for k, name, scale, unit in FIGURES:
            print(f"| {name} | {medians[before][k] / scale:.2f} {unit} | {medians[after][k] / scale:.2f} {unit} | "
                  f"{result['ratios'][k]:.3f} |")
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(result, f, indent=2)


def self_costs(path):
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", path],
                         capture_output=True, text=True, check=True).stdout
    costs = collections.Counter()
    for line in out.splitlines():
        m = re.match(r"^\s*([\d,]+) \([^)]*\)\s+(.*)$", line)
        if m and "PROGRAM TOTALS" not in m.group(2):
            name = re.sub(r" \[[^\]]*/(service/coreflow|lib[^/\]]*)\]$", r" [\1]", m.group(2))
            costs[re.sub(r"0x[0-9a-f]+", "0x?", name)] += int(m.group(1).replace(",", ""))
    return costs


def diff(args):
    runs = [args.run_a, args.run_b]
    per = []
    for run in runs:
        phases = dumps(run)
        div = divisors(run, phases, args.nodes, args.request_function)[args.phase] if args.phase in ("connect", "fanout", "saturation") else 1
        per.append((self_costs(phases[args.phase]), div))
    (a, da), (b, db) = per
    print(f"{args.phase}: total per operation {sum(a.values()) / da:.0f} -> {sum(b.values()) / db:.0f} Ir")
    rows = sorted(((b[k] / db - a[k] / da, k) for k in set(a) | set(b)), reverse=True)
    for delta, k in rows[:args.top] + [(None, None)] + rows[-args.top // 2:]:
        if delta is None:
            print("...")
            continue
        print(f"{delta:+9.0f} {a[k] / da:9.0f} -> {b[k] / db:9.0f}  {k[:150]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--request-function", default=DEFAULT_REQUEST_FUNCTION)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("summary")
    s.add_argument("out")
    d = sub.add_parser("diff")
    d.add_argument("run_a")
    d.add_argument("run_b")
    d.add_argument("phase", choices=["connect", "idle", "fanout", "saturation"])
    d.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    summary(args) if args.command == "summary" else diff(args)


if __name__ == "__main__":
    sys.exit(main())
