#!/usr/bin/python3
"""Seal several targets' release outputs into one set (docs/contract.md §19.5): one
tspack-manifest.json whose `bundles` hold every target, the archives beside it, and SHA256SUMS.txt
over the manifest and every archive. Each input is an --out directory of make-release.py; all must
name the same package, name, version, source commit and mtime, and each archive must still have the
digest its manifest states.

Usage: seal-set.py --out DIR INPUT_DIR...
"""
import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

SAME = ("package", "name", "version", "sourceCommit", "sourceDateEpoch")


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("inputs", nargs="+")
    args = ap.parse_args()
    out = Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    merged, bundles = None, []
    for d in map(Path, args.inputs):
        m = json.loads((d / "tspack-manifest.json").read_text())
        if merged is None:
            merged = {k: m[k] for k in SAME}
            merged["publishable"] = m["publishable"]
        differing = [k for k in SAME if m[k] != merged[k]]
        if differing:
            print(f"seal-set: {d} differs in {', '.join(differing)}", file=sys.stderr)
            return 1
        merged["publishable"] = merged["publishable"] and m["publishable"]
        for b in m["bundles"]:
            if sha256_of(d / b["archive"]) != b["sha256"]:
                print(f"seal-set: {d / b['archive']} no longer has its manifest's digest", file=sys.stderr)
                return 1
            if any(x["id"] == b["id"] for x in bundles):
                print(f"seal-set: bundle {b['id']} given twice", file=sys.stderr)
                return 1
            shutil.copyfile(d / b["archive"], out / b["archive"])
            bundles.append(b)
    manifest = {**{k: merged[k] for k in ("package", "name", "version", "sourceCommit")},
                "publishable": merged["publishable"], "sourceDateEpoch": merged["sourceDateEpoch"],
                "bundles": sorted(bundles, key=lambda b: b["id"])}
    (out / "tspack-manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    names = ["tspack-manifest.json"] + [b["archive"] for b in manifest["bundles"]]
    (out / "SHA256SUMS.txt").write_text("".join(f"{sha256_of(out / n)}  {n}\n" for n in names))
    print(f"seal-set: {out}: {', '.join(b['id'] for b in manifest['bundles'])}; publishable {manifest['publishable']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
