"""The twin's state-space soak (aoi.twin.soak) under Hypothesis: derandomized sequences of API operations of all three
identities across the built-in kinds (creates, replaces, merge/strategic/JSON/apply patches with nulls and wrong
types, deletes, scales, evictions, status writes), interleaved with clock advances and reconciles. After every step:
no connection thread died and none was dropped, the API answers and no reconcile faulted, every changed object
round-trips through the official client's models, and the three apps' health checks evaluate.

Bounded: EXAMPLES sequences of STEPS steps, no shrinking (about a minute on two cores); benchmarks/twin_soak.py runs
the long version and counts what it finds.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from kubernetes import config

from aoi.apps.catalog import APP_NAMES, load_app
from aoi.kube import Kube
from aoi.problems import strict
from aoi.twin import build_twin
from aoi.twin.soak import Soak

EXAMPLES, STEPS = 16, 40
NAMESPACES = [load_app(name).namespace for name in APP_NAMES]


class HypothesisDraw:
    """The soak's choices, drawn by Hypothesis."""

    def __init__(self, data):
        self.data = data

    def choice(self, options):
        return self.data.draw(st.sampled_from(options))

    def integer(self, low: int, high: int) -> int:
        return self.data.draw(st.integers(low, high))


class AppHealth:
    """The three apps' strict health checks, through the Python client as the current clone's admin (the same
    check benchmarks/twin_soak.py makes)."""

    def __init__(self):
        self.kube, self.sequence = None, 0

    def __call__(self, soak: Soak) -> list[str]:
        if self.kube is None or self.sequence != soak.sequence:
            if self.kube is not None:
                self.kube.close()
            self.kube, self.sequence = Kube(config.new_client_from_config_dict(soak.kubeconfig())), soak.sequence
        found = []
        for namespace in NAMESPACES:
            try:
                strict.health(self.kube, namespace)
            except Exception as exc:  # noqa: BLE001 - any exception is the finding
                found.append(f"the health check of {namespace} raised {type(exc).__name__}: {exc}")
        return found


@pytest.fixture(scope="module")
def soak():
    runner = Soak(build_twin(seed=0), checks=[AppHealth()])
    assert runner.check() == []  # every object of the settled twin round-trips before the sequences start
    yield runner
    runner.close()


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, phases=(Phase.generate,),
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_the_twin_survives_random_api_sequences(soak, data):
    soak.begin()
    draw, history = HypothesisDraw(data), []
    for _ in range(STEPS):
        history.append(soak.step(draw))
        found = soak.check()
        assert not found, "after:\n  " + "\n  ".join(h[:300] for h in history[-8:]) + "\nfound:\n  " + \
            "\n  ".join(f[:600] for f in found)
