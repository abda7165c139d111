#!/usr/bin/python3
"""Builds a small OCI image layout by hand for tst_registrypull (stdlib only).

usage: make_oci_layout.py DIR TAG LAYER_BYTES
One uncompressed tar layer holding /payload.bin (LAYER_BYTES of seeded pseudo-random bytes), one
config, one manifest, index.json with org.opencontainers.image.ref.name=TAG. Prints the manifest
digest on stdout. skopeo copy --preserve-digests keeps every digest when pushing it.
"""
import hashlib
import io
import json
import os
import random
import sys
import tarfile


def write_blob(root, data):
    digest = hashlib.sha256(data).hexdigest()
    path = os.path.join(root, "blobs", "sha256", digest)
    with open(path, "wb") as f:
        f.write(data)
    return "sha256:" + digest, len(data)


def main():
    root, tag, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(os.path.join(root, "blobs", "sha256"), exist_ok=True)
    rng = random.Random(4711)
    payload = rng.randbytes(size)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("payload.bin")
        info.size = len(payload)
        info.mtime = 0
        info.mode = 0o644
        tar.addfile(info, io.BytesIO(payload))
    layer = buf.getvalue()
    layer_digest, layer_size = write_blob(root, layer)
    config = json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Cmd": ["/payload.bin"]},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
    }, separators=(",", ":")).encode()
    config_digest, config_size = write_blob(root, config)
    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest,
                   "size": config_size},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer_digest,
                    "size": layer_size}],
    }, separators=(",", ":")).encode()
    manifest_digest, manifest_size = write_blob(root, manifest)
    with open(os.path.join(root, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    with open(os.path.join(root, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest_digest,
            "size": manifest_size, "annotations": {"org.opencontainers.image.ref.name": tag}}]}, f)
    print(manifest_digest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
