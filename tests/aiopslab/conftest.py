"""The stand-in orchestrator, loaded by path (tests run in importlib mode: their folders are not on sys.path)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"aoi_tests_{name}", Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


standin = _load("standin")


@pytest.fixture
def StandIn():
    """The stand-in orchestrator class."""
    return standin.StandInOrchestrator
