#!/usr/bin/python3
"""The host release, checked from outside (docs/contract.md §19.5). Rules: HR-04..HR-08, HR-12, HR-13,
UC-01, UC-05, UC-13, UC-14, UC-16.

Packs this build directory's `coreflow` (and `coreflow-console`) with packaging/make-release.py into a
temporary directory (the same script `./run release` runs on the Release build), then, knowing nothing
of how the script works:
  - SHA256SUMS.txt verifies the manifest and the archive (HR-05); the manifest names the package, the
    name, the CMake project version, the source commit, `publishable` (HR-04), bundle id and archive
    name (HR-06);
  - the archive holds one directory and nothing else (HR-07), every entry owned by 0/0 with the
    manifest's fixed mtime, in name order (reproducible);
  - extracted, every file's sha256, mode and type equals the manifest's and the manifest lists nothing
    more or less (HR-04); the modes the contract states (HR-08);
  - no ELF file needs Qt HttpServer, every run path is $ORIGIN-relative, the notices are complete;
  - run the way the unit runs it (UC-01: no arguments; empty environment, LD_LIBRARY_PATH empty, from a
    read-only directory, HR-13), from a working directory holding a .nogit/env.yml overlay that it must
    ignore (HR-12): exit 1 naming every variable listed in its qenv.yml (UC-14);
  - with the bearer as a systemd credential (UC-05) and a loopback TCP peer as Cloudly, under LD_DEBUG:
    it starts, coreflow-console --text reads its status socket, SIGTERM stops it with exit 0 (UC-13),
    and every shared object either process loaded (including the dlopen()ed Qt plugins and OpenSSL)
    came from the release, except glibc's; the bearer appears on no output line (UC-16).

Usage: tst_release.py --build-dir DIR --source-dir DIR
"""
import argparse
import hashlib
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

GLIBC = re.compile(r"^(ld-linux[-\w.]*\.so\.\d+|lib(c|m|dl|rt|pthread|resolv|util|anl|nsl|mvec|BrokenLocale)\.so\.\d+)$")
REQUIRED_MODES = {"coreflow": 0o755, "qenv.yml": 0o644, "license": 0o644,
                  "coreflow.third-party-notices.txt": 0o644, "coreflow.third-party-notices.json": 0o644}
CANARY = "canary-bearer-7f3c9e1d-never-printed"
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}", flush=True)
    return condition


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def elf_files(root):
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink() and p.read_bytes()[:4] == b"\x7fELF":
            yield p


def loaded_objects(ld_debug_text):
    """Paths of every shared object the loader initialised (LD_DEBUG=files 'calling init:')."""
    return sorted({m.strip() for m in re.findall(r"calling init: (\S+)", ld_debug_text)})


def check_loaded_inside(what, text, root):
    objects = loaded_objects(text)
    check(objects, f"{what}: LD_DEBUG reported no loaded object")
    for o in objects:
        inside = os.path.realpath(o).startswith(str(root) + os.sep)
        check(inside or GLIBC.match(os.path.basename(o)), f"{what} loaded {o} from outside the release")
    return objects


def required_names(root):
    text = (root / "qenv.yml").read_text()
    block = re.search(r"^required:\s*\n((?:[ \t]+-[ \t]+\S+[ \t]*\n|[ \t]*#.*\n)+)", text, re.M)
    return re.findall(r"-[ \t]+([A-Z][A-Z0-9_]*)", block.group(1)) if block else []


class HoldingPeer:
    """A loopback TCP peer that accepts and holds every connection open, saying nothing: a Cloudly
    that never answers, so the relay starts its TLS handshake and waits."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.held = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)


def wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    args = ap.parse_args()
    build_dir, source_dir = Path(args.build_dir).resolve(), Path(args.source_dir).resolve()
    version = re.search(r"^CMAKE_PROJECT_VERSION:STATIC=(\S+)$", (build_dir / "CMakeCache.txt").read_text(), re.M).group(1)
    commit = subprocess.run(["git", "-C", str(source_dir), "rev-parse", "HEAD"], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(source_dir), "status", "--porcelain"], stdout=subprocess.PIPE, text=True, check=True).stdout.strip() != ""
    has_console = (build_dir / "console" / "coreflow-console").exists()

    with tempfile.TemporaryDirectory(prefix="coreflow-release-test-") as tmp:
        tmp = Path(tmp)
        out = tmp / "out"
        cmd = ["/usr/bin/python3", str(source_dir / "packaging" / "make-release.py"), "--build-dir", str(build_dir), "--out", str(out)]
        if not has_console:
            cmd.append("--no-console")
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(r.stdout, end="")
        if not check(r.returncode == 0, f"make-release.py exited {r.returncode}"):
            return 1

        # HR-05: the sums cover exactly the manifest and the archive, and verify.
        sums = {}
        for line in (out / "SHA256SUMS.txt").read_text().splitlines():
            digest, name = line.split("  ", 1)
            sums[name] = digest
        archives = sorted(p.name for p in out.glob("*.tar.gz"))
        check(sorted(sums) == sorted(archives + ["tspack-manifest.json"]), f"SHA256SUMS.txt lists {sorted(sums)}")
        for name, digest in sums.items():
            check(sha256_of(out / name) == digest, f"SHA256SUMS.txt: {name} does not verify")

        # HR-04, HR-06: the manifest's facts.
        manifest = json.loads((out / "tspack-manifest.json").read_text())
        check(manifest.get("package") == "@serve.zone/coreflow", f"manifest package {manifest.get('package')}")
        check(manifest.get("name") == "coreflow-relay", f"manifest name {manifest.get('name')}")
        check(manifest.get("version") == version, f"manifest version {manifest.get('version')}, CMake says {version}")
        check(manifest.get("sourceCommit") == commit, f"manifest sourceCommit {manifest.get('sourceCommit')}, HEAD is {commit}")
        check(manifest.get("publishable") is (not dirty), f"manifest publishable {manifest.get('publishable')} for a {'dirty' if dirty else 'clean'} tree")
        bundles = manifest.get("bundles", [])
        check(len(bundles) == 1 and bundles[0].get("id") == "linux-amd64", f"bundles {[b.get('id') for b in bundles]}")
        bundle = bundles[0]
        base = f"coreflow-relay-{version}-linux-amd64"
        check(bundle.get("archive") == base + ".tar.gz" and archives == [base + ".tar.gz"], f"archive {bundle.get('archive')} / {archives}")
        archive = out / (base + ".tar.gz")
        check(bundle.get("sha256") == sha256_of(archive), "manifest's archive digest is not the archive's")

        # HR-07 and reproducibility: one directory, owner 0/0, fixed mtime, name order.
        with tarfile.open(archive, "r:gz") as t:
            members = t.getmembers()
        names = [m.name for m in members]
        check({n.split("/", 1)[0] for n in names} == {base}, f"archive top level {sorted({n.split('/', 1)[0] for n in names})}")
        check(members[0].name == base and members[0].isdir(), "the archive's first entry is not its directory")
        check(names == sorted(names), "archive entries are not in name order")
        for m in members:
            check(m.uid == 0 and m.gid == 0, f"{m.name} owned by {m.uid}/{m.gid}")
            check(m.mtime == manifest.get("sourceDateEpoch"), f"{m.name} mtime {m.mtime}, manifest says {manifest.get('sourceDateEpoch')}")
            check(m.isdir() or m.isfile() or m.issym(), f"{m.name}: neither file, directory nor symlink")

        # Extract with tar as a consumer would, then compare every file with the manifest.
        ext = tmp / "extracted"
        ext.mkdir()
        subprocess.run(["tar", "-xpzf", str(archive), "-C", str(ext)], check=True)
        root = ext / base
        listed = {f["path"]: f for f in bundle.get("files", [])}
        present = {str(p.relative_to(root)): p for p in root.rglob("*") if not p.is_dir() or p.is_symlink()}
        check(sorted(listed) == sorted(present),
              f"manifest and directory differ: only listed {sorted(set(listed) - set(present))}, only present {sorted(set(present) - set(listed))}")
        for rel, p in sorted(present.items()):
            entry = listed.get(rel, {})
            if p.is_symlink():
                check(entry.get("type") == "symlink" and entry.get("target") == os.readlink(p), f"{rel}: symlink not as listed")
                check(not os.path.isabs(os.readlink(p)) and os.path.realpath(p).startswith(str(root) + os.sep), f"{rel} points outside")
                continue
            mode = stat.S_IMODE(p.lstat().st_mode)
            check(entry.get("type") == "file", f"{rel}: listed type {entry.get('type')}")
            check(entry.get("mode") == format(mode, "04o"), f"{rel}: mode {mode:04o}, manifest says {entry.get('mode')}")
            check(entry.get("sha256") == sha256_of(p), f"{rel}: digest differs from the manifest")
            check(mode in (0o644, 0o755), f"{rel}: mode {mode:04o}")
        for rel, mode in REQUIRED_MODES.items():
            check(rel in present and stat.S_IMODE(present[rel].stat().st_mode) == mode, f"{rel} missing or not {mode:04o}")
        if has_console:
            check("coreflow-console" in present and stat.S_IMODE(present["coreflow-console"].stat().st_mode) == 0o755, "coreflow-console missing or not 0755")
        check((root / "license").read_bytes() == (source_dir / "LICENSE").read_bytes(), "license is not the project's LICENSE")
        names_required = required_names(root)
        check(names_required == ["CLOUDLY_URL", "SERVEZONE_CLUSTER_RELAY_AUTHORIZATION"], f"qenv.yml required: {names_required}")

        # No Qt HttpServer; $ORIGIN run paths; notices for every bundled library.
        notices = json.loads((root / "coreflow.third-party-notices.json").read_text())
        for key in ("generator", "binary", "target", "runtime", "packages"):
            check(key in notices, f"notices JSON lacks {key}")
        noticed = {f for pkg in notices.get("packages", []) for f in pkg.get("files", [])}
        notices_text = (root / "coreflow.third-party-notices.txt").read_text()
        for elf in elf_files(root):
            rel = str(elf.relative_to(root))
            d = subprocess.run(["readelf", "-d", "-W", str(elf)], stdout=subprocess.PIPE, text=True, check=True).stdout
            check("HttpServer" not in d and "HttpServer" not in elf.name, f"{rel} needs Qt HttpServer")
            runpaths = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[([^\]]*)\]", d)
            check(runpaths and all(x.startswith("$ORIGIN") for rp in runpaths for x in rp.split(":")), f"{rel}: run path {runpaths}")
            if rel.startswith(("lib/", "plugins/")):
                check(rel in noticed, f"{rel} has no entry in the notices")
                check(rel in notices_text, f"{rel} is not named in the text notices")
        for pkg in notices.get("packages", []):
            check(pkg.get("package", "") in notices_text and pkg.get("version", "") in notices_text, f"text notices lack {pkg.get('package')}")

        # The unit's way: no arguments, empty environment, LD_LIBRARY_PATH empty, read-only release,
        # a working directory whose .nogit overlay would supply the missing facts (it must not).
        cwd = tmp / "cwd"
        (cwd / ".nogit").mkdir(parents=True)
        (cwd / ".nogit" / "env.yml").write_text("CLOUDLY_URL: https://127.0.0.1:9\nSERVEZONE_CLUSTER_RELAY_AUTHORIZATION: " + CANARY + "\n")
        subprocess.run(["chmod", "-R", "a-w", str(root)], check=True)
        before = sorted(str(p) for p in root.rglob("*")) + sorted(str(p) for p in cwd.rglob("*"))
        r = subprocess.run([str(root / "coreflow")], env={"LD_LIBRARY_PATH": ""}, cwd=cwd,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        check(r.returncode == 1, f"empty environment: exit {r.returncode}, expected 1 ({r.stderr.strip()})")
        check(any(all(n in line for n in names_required) for line in r.stderr.splitlines()),
              f"empty environment: no line names {names_required}: {r.stderr.strip()}")
        check(CANARY not in r.stdout + r.stderr, "the overlay's bearer was printed")
        after = sorted(str(p) for p in root.rglob("*")) + sorted(str(p) for p in cwd.rglob("*"))
        check(before == after, "the relay created files in its directory or working directory")

        # With the bearer as a systemd credential and a Cloudly that holds the connection open.
        creds = tmp / "credentials"
        creds.mkdir()
        (creds / "SERVEZONE_CLUSTER_RELAY_AUTHORIZATION").write_text(CANARY)
        os.chmod(creds / "SERVEZONE_CLUSTER_RELAY_AUTHORIZATION", 0o400)
        pem = tmp / "anchor.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", str(tmp / "anchor.key"), "-out", str(pem), "-subj", "/CN=release-test", "-days", "1"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        peer = HoldingPeer()
        status = tmp / "status.sock"
        relay_log = tmp / "relay.log"
        env = {"LD_LIBRARY_PATH": "", "LD_DEBUG": "files", "CREDENTIALS_DIRECTORY": str(creds),
               "CLOUDLY_URL": f"https://127.0.0.1:{peer.port}"}
        with open(relay_log, "w") as log:
            relay = subprocess.Popen([str(root / "coreflow"), "--status-socket", str(status), "--ca-file", str(pem)],
                                     env=env, cwd=cwd, stdout=log, stderr=log)
        try:
            check(wait_for(lambda: status.exists() and peer.held, 60), "the relay opened no status socket or never dialled Cloudly")
            if has_console:
                console_log = tmp / "console.log"
                with open(console_log, "w") as log:
                    c = subprocess.run([str(root / "coreflow-console"), "--text", "--socket", str(status)],
                                       env={"LD_LIBRARY_PATH": "", "LD_DEBUG": "files"}, cwd=cwd, stdout=subprocess.PIPE, stderr=log,
                                       text=True, timeout=60)
                check(c.returncode == 0 and c.stdout.strip(), f"coreflow-console --text exited {c.returncode}")
                check(CANARY not in c.stdout, "the console printed the bearer")
                check_loaded_inside("coreflow-console --text", console_log.read_text(), root)
                # The window mode, on the offscreen platform plugin shipped in plugins/platforms.
                window_log = tmp / "window.log"
                with open(window_log, "w") as log:
                    w = subprocess.Popen([str(root / "coreflow-console"), "--socket", str(status)],
                                         env={"LD_LIBRARY_PATH": "", "LD_DEBUG": "files", "QT_QPA_PLATFORM": "offscreen"},
                                         cwd=cwd, stdout=log, stderr=log)
                    wait_for(lambda: "libqoffscreen.so" in window_log.read_text() and w.poll() is None, 30)
                    time.sleep(1)
                    exited = w.poll()
                    w.kill()
                    w.wait()
                check(exited is None, f"the console window exited {exited} on the offscreen platform")
                objects = check_loaded_inside("coreflow-console (window, offscreen)", window_log.read_text(), root)
                check(any(o.endswith("plugins/platforms/libqoffscreen.so") for o in objects), "the offscreen plugin was not loaded from the release")
        finally:
            relay.send_signal(signal.SIGTERM)
            try:
                code = relay.wait(timeout=60)
            except subprocess.TimeoutExpired:
                relay.kill()
                code = relay.wait()
        text = relay_log.read_text()
        check(code == 0, f"the relay exited {code} after SIGTERM, expected 0")
        objects = check_loaded_inside("coreflow", text, root)
        check(any(o.endswith("plugins/tls/libqopensslbackend.so") for o in objects), "the TLS backend was not loaded from the release")
        log_lines = [line for line in text.splitlines() if not re.match(r"^\s*\d+:", line)]
        check(any("coreflow" in line and "start" in line for line in log_lines), "no start line in the relay's log")
        check(not any(CANARY in line for line in log_lines), "the bearer appears in the relay's log")
        subprocess.run(["chmod", "-R", "u+w", str(ext)], check=True)

    if failures:
        print(f"release test: {len(failures)} failure(s)")
        return 1
    print("release test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
