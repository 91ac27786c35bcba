"""A failed import of AIOpsLab names its real cause: a missing module, tiktoken's offline fetch, or the error itself.

A small package named `aiopslab` (config.yml included) stands in for an installation whose orchestrator fails to
import; AIOpsLab's real one fetches tiktoken's file at import (evaluators/quantitative.py) and needs its
dependencies (pyproject.toml), so these are the three ways it fails.
"""

from __future__ import annotations

import sys

import pytest

from aoi.aiopslab.runner import AIOpsLabMissing, orchestrator


@pytest.fixture
def broken(tmp_path, monkeypatch):
    """Return a function that installs an `aiopslab` whose orchestrator module runs the given code."""
    def install(code: str) -> None:
        package = tmp_path / "site" / "aiopslab"
        (package / "orchestrator").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "config.yml").write_text("k8s_host: kind\n")
        (package / "orchestrator" / "__init__.py").write_text(code)
        monkeypatch.syspath_prepend(str(tmp_path / "site"))
        for name in [n for n in sys.modules if n == "aiopslab" or n.startswith("aiopslab.")]:
            monkeypatch.delitem(sys.modules, name)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    yield install
    for name in [n for n in sys.modules if n == "aiopslab" or n.startswith("aiopslab.")]:
        del sys.modules[name]


def failure() -> str:
    with pytest.raises(AIOpsLabMissing) as caught:
        orchestrator()
    return str(caught.value)


def test_a_missing_dependency_is_named_with_how_to_install_it(broken):
    broken("import aoi_test_missing_dependency\n")
    message = failure()
    assert "the module 'aoi_test_missing_dependency' is missing" in message
    assert "pip install -e ." in message and "pip install aoi-test-missing-dependency" in message
    assert "TIKTOKEN" not in message


def test_an_offline_tokenizer_fetch_says_how_to_seed_the_cache(broken):
    broken("raise ConnectionError(\"Failed to resolve 'openaipublic.blob.core.windows.net'\")\n")
    message = failure()
    assert "TIKTOKEN_CACHE_DIR" in message and "openaipublic.blob.core.windows.net" in message


def test_any_other_error_is_reported_with_its_text_and_place(broken):
    broken("config = {}\nhost = config['k8s_host']\n")
    message = failure()
    assert "KeyError: 'k8s_host'" in message and "orchestrator/__init__.py:2" in message
    assert "TIKTOKEN" not in message and "is missing" not in message
