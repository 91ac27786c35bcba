"""The twin's layers hold: no import cycles anywhere in aoi, and each twin layer imports only the layers below it.

The graph is grimp's (what import-linter reads), TYPE_CHECKING imports included: a type annotation that points up a
layer is the first step of a cycle.
"""

from __future__ import annotations

import grimp
import pytest

# Top to bottom; a layer may import the ones after it. "aoi.twin" stands for the modules at the twin's root.
LAYERS = ["aoi.twin", "aoi.twin.api | aoi.twin.behaviour", "aoi.twin.kubelet", "aoi.twin.controllers", "aoi.twin.core",
          "aoi.shellsim | aoi.apps"]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("aoi", cache_dir=None)


def layer_of(module: str) -> int | None:
    """Return the index of the most specific layer holding module, or None outside the twin's layers."""
    best, depth = None, -1
    for i, layer in enumerate(LAYERS):
        for package in layer.split(" | "):
            if (module == package or module.startswith(package + ".")) and package.count(".") > depth:
                best, depth = i, package.count(".")
    return best


def cycles(graph: grimp.ImportGraph) -> list[str]:
    """Return each import m -> i that closes a cycle (i reaches m again), as `m -> i -> ... -> m`."""
    found = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back:
                found.append(" -> ".join((module, *back)))
    return found


def test_no_import_cycles(graph):
    assert cycles(graph) == []


def test_the_cycle_finder_sees_a_cycle():
    fake = grimp.ImportGraph()
    for module in ("a", "a.x", "a.y", "a.z"):
        fake.add_module(module)
    fake.add_import(importer="a.x", imported="a.y")
    fake.add_import(importer="a.y", imported="a.x")
    fake.add_import(importer="a.z", imported="a.x")
    assert cycles(fake) == ["a.x -> a.y -> a.x", "a.y -> a.x -> a.y"]


def upward(graph: grimp.ImportGraph) -> list[str]:
    """Return the imports from a twin layer into a layer above it."""
    return [f"{m} -> {i}" for m in sorted(graph.modules) if (a := layer_of(m)) is not None
            for i in sorted(graph.find_modules_directly_imported_by(m)) if (b := layer_of(i)) is not None and b < a]


def test_each_twin_layer_imports_only_the_layers_below(graph):
    assert upward(graph) == []


def test_an_import_up_a_layer_is_found():
    fake = grimp.ImportGraph()
    for module in ("aoi.twin.core.store", "aoi.twin.kubelet.status", "aoi.shellsim.pod"):
        fake.add_module(module)
    fake.add_import(importer="aoi.twin.kubelet.status", imported="aoi.shellsim.pod")  # down: fine
    fake.add_import(importer="aoi.twin.core.store", imported="aoi.twin.kubelet.status")  # up
    assert upward(fake) == ["aoi.twin.core.store -> aoi.twin.kubelet.status"]
