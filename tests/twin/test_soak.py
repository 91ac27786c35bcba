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

from aoi.problems.app_health import AppHealth
from aoi.twin import build_twin
from aoi.twin.soak import Soak

EXAMPLES, STEPS = 16, 40


class HypothesisDraw:
    """The soak's choices, drawn by Hypothesis."""

    def __init__(self, data):
        self.data = data

    def choice(self, options):
        return self.data.draw(st.sampled_from(options))

    def integer(self, low: int, high: int) -> int:
        return self.data.draw(st.integers(low, high))


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
