#!/usr/bin/python3
"""One instruction-count run (bench/README.md, "Issue 14 check").

phases.py --bench COREFLOW_BENCH --relay COREFLOW --workdir DIR [--label L] [--nodes N] [--sat-seconds S]

Runs `coreflow-bench run --target relay` against COREFLOW started under
`valgrind --tool=callgrind --instr-atstart=no`, and reads the harness's log lines as they come: when the
relay is up, instrumentation is switched on; after each scenario callgrind writes one dump
(`callgrind_control -d PHASE`), so DIR/cg.out.<k> holds exactly the instructions of one phase:

  startup     instrumentation on until the first node dials (nothing measured)
  connect     N nodes connect (TLS + WebSocket upgrade) and register
  idle        the idle scenario
  fanout      3 rounds of one push to each of the N nodes, all acknowledged
  saturation  1 s warm-up, then --sat-seconds of forwarded requests, then the drain

The harness's own JSON result goes to DIR/result.json, its log (with a timestamp per line) to
DIR/harness.log. Exit status: the harness's.
"""
import argparse
import os
import re
import stat
import subprocess
import sys
import time

PHASES = [  # (substring of the harness's log line, dump name)
    ("nodes registered in", "connect"),
    (" idle: RSS", "idle"),
    ("fan-out median", "fanout"),
    ("saturation:", "saturation"),
]
UP = re.compile(r" up \(pid (\d+),")


def control(args, log):
    subprocess.run(["callgrind_control", *args], stdout=log, stderr=subprocess.STDOUT, check=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", required=True, help="coreflow-bench (bench/harness)")
    parser.add_argument("--relay", required=True, help="the coreflow binary to count")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--label", default="relay")
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--sat-seconds", type=float, default=8)
    parser.add_argument("--certs", help="certificates from bench/make-certs.sh (made in WORKDIR when absent)")
    args = parser.parse_args()

    work = os.path.abspath(args.workdir)
    os.makedirs(work, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    certs = os.path.abspath(args.certs or os.path.join(work, "certs"))  # the relay takes absolute paths only
    if not os.path.exists(os.path.join(certs, "ca.pem")):
        subprocess.run(["bash", os.path.join(here, "..", "make-certs.sh"), certs], stdout=subprocess.DEVNULL, check=True)

    # The harness starts the relay with its own arguments appended: a wrapper puts valgrind in front.
    wrapper = os.path.join(work, "relay-under-callgrind.sh")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\n")
        f.write(f"exec valgrind --tool=callgrind --callgrind-out-file={work}/cg.out --dump-instr=no --dump-line=no "
                f"--separate-threads=no --instr-atstart=no {os.path.abspath(args.relay)} \"$@\"\n")
    os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IXUSR)

    command = [args.bench, "run", "--nodes", str(args.nodes), "--certs", certs, "--workdir", work,
               "--out", os.path.join(work, "result.json"), "--label", args.label,
               "--sat-seconds", str(args.sat_seconds), "--low-seconds", "1", "--stall", "0", "--target", "relay",
               "--", wrapper, "--ca-file", os.path.join(certs, "ca.pem"),
               "--status-socket", os.path.join(work, "status.sock")]
    pending = list(PHASES)
    pid = None
    with open(os.path.join(work, "harness.log"), "w") as log, open(os.path.join(work, "control.log"), "w") as ctl:
        harness = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        for line in harness.stdout:
            log.write(f"{time.time():.3f} {line}")
            log.flush()
            if pid is None:
                m = UP.search(line)
                if m:
                    pid = m.group(1)
                    control(["-i", "on", pid], ctl)
                    control(["-d", "startup", pid], ctl)
                continue
            if pending and pending[0][0] in line:
                control(["-d", pending[0][1], pid], ctl)
                pending.pop(0)
        code = harness.wait()
    if pending:
        print(f"phases: {args.label}: the harness ended before {', '.join(p for _, p in pending)}", file=sys.stderr)
        return code or 1
    return code


if __name__ == "__main__":
    sys.exit(main())
