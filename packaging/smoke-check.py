#!/usr/bin/python3
"""Smoke check of a staged host release directory (docs/contract.md §19.5), run by `./run release`.

1. Every ELF file's libraries resolve inside the directory, except glibc's (ldd, LD_LIBRARY_PATH unset).
2. `coreflow --version` and `coreflow-console --version` (when shipped) start in an empty environment.
3. `coreflow` started once with no arguments in an empty environment, from an empty working directory,
   logs its start and refuses the missing launch facts: exit 1 and one line naming every variable
   listed under `required:` in the release's qenv.yml. The wording around the names is not checked.

Usage: smoke-check.py [--runner PROGRAM] <release directory>
  --runner  run the executables through PROGRAM (e.g. qemu-aarch64-static for a cross-built release);
            library resolution is then checked from the files' NEEDED entries instead of with ldd.
"""
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

# glibc's own files: the host provides them (packaging/make-release.py bundles everything else).
GLIBC = re.compile(r"^(ld-linux[-\w.]*\.so\.\d+|lib(c|m|dl|rt|pthread|resolv|util|anl|nsl|mvec|BrokenLocale)\.so\.\d+)$")


def fail(message):
    print(f"smoke-check: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def required_variables(root):
    # qenv.yml is written by packaging (a map with a `required:` list of names); read it plainly.
    names, inside = [], False
    for line in (root / "qenv.yml").read_text().splitlines():
        if re.match(r"^required:\s*$", line):
            inside = True
        elif inside and re.match(r"^\s+-\s+([A-Z][A-Z0-9_]*)\s*$", line):
            names.append(line.split("-", 1)[1].strip())
        elif inside and line.strip() and not line.lstrip().startswith("#"):
            inside = False
    if not names:
        fail("qenv.yml lists no required variable")
    return names


def needed_of(path):
    out = subprocess.run(["readelf", "-d", "-W", str(path)], stdout=subprocess.PIPE, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def check_needed(root):
    """Every NEEDED name of every ELF file is in lib/ or is glibc's (no loader run: foreign arch)."""
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.is_symlink() or path.read_bytes()[:4] != b"\x7fELF":
            continue
        for name in needed_of(path):
            if not (root / "lib" / name).exists() and not GLIBC.match(name):
                fail(f"{path.relative_to(root)}: needs {name}, which is neither in lib/ nor glibc's")


def check_resolution(root):
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.read_bytes()[:4] != b"\x7fELF":
            continue
        out = subprocess.run(["ldd", str(path)], env={"PATH": "/usr/bin:/bin"}, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True).stdout
        for line in out.splitlines():
            if "=>" not in line:
                continue
            name, target = [s.strip() for s in line.split("=>", 1)]
            target = target.split(" (", 1)[0]
            if target.startswith("not found"):
                fail(f"{path.relative_to(root)}: {name} not found")
            inside = os.path.realpath(target).startswith(str(root) + os.sep)
            if not inside and not GLIBC.match(name):
                fail(f"{path.relative_to(root)}: {name} resolves outside the release, to {target}")


RUNNER = []


def run_empty(argv, cwd):
    return subprocess.run(RUNNER + argv, env={}, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)


def main():
    argv = sys.argv[1:]
    if len(argv) == 3 and argv[0] == "--runner":
        RUNNER.append(argv[1])
        argv = argv[2:]
    if len(argv) != 1:
        fail("usage: smoke-check.py [--runner PROGRAM] <release directory>")
    root = Path(argv[0]).resolve()
    if RUNNER:
        check_needed(root)
    else:
        check_resolution(root)
    with tempfile.TemporaryDirectory(prefix="coreflow-smoke-") as cwd:
        for exe in ("coreflow", "coreflow-console"):
            if exe == "coreflow-console" and not (root / exe).exists():
                continue
            r = run_empty([str(root / exe), "--version"], cwd)
            if r.returncode != 0 or exe not in r.stdout:
                fail(f"{exe} --version exited {r.returncode}: {r.stdout.strip()} {r.stderr.strip()}")
        r = run_empty([str(root / "coreflow")], cwd)
        if os.listdir(cwd):
            fail(f"coreflow wrote into its working directory: {os.listdir(cwd)}")
    lines = r.stderr.splitlines()
    names = required_variables(root)
    if r.returncode != 1:
        fail(f"coreflow in an empty environment exited {r.returncode}, expected 1; stderr: {r.stderr.strip()}")
    if not any(re.search(r"\bcoreflow \S+ starting\b", l) for l in lines):
        fail(f"no start line on stderr: {r.stderr.strip()}")
    if not any(all(n in l for n in names) for l in lines):
        fail(f"no line names every missing launch fact ({', '.join(names)}): {r.stderr.strip()}")
    print(f"smoke-check: ok: {root.name}: libraries resolve inside it (glibc from the host); "
          f"empty environment refused naming {', '.join(names)}")


if __name__ == "__main__":
    main()
