"""Same seed, same cluster: kubectl output is byte-identical across twins; another seed names things differently."""

import pytest

from aoi.twin import build_twin
from aoi.twin.testing import Served

NS = "test-hotel-reservation"
COMMANDS = ("get pods -A -o yaml", "get events -A", "get events -A -o yaml", "get svc,ep -A -o wide",
            f"describe pods -n {NS}", "describe node kind-worker", "top pods -A")


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """Two HotelReservation twins with seed 0 and one with seed 1."""
    served = [Served(build_twin(["hotel-reservation"], seed=seed), tmp_path_factory.mktemp(f"seed{seed}"))
              for seed in (0, 0, 1)]
    yield served
    for one in served:
        one.close()


@pytest.mark.parametrize("command", COMMANDS)
def test_same_seed_same_output(twins, command):
    first, second, _ = twins
    out = first.ok(command)
    assert out and out == second.ok(command)


def test_same_seed_same_logs(twins):
    first, second, _ = twins
    pods = first.ok(f"get pods -n {NS} -o name").split()
    assert pods == second.ok(f"get pods -n {NS} -o name").split()
    for pod in pods[::3]:
        assert first.ok(f"logs {pod} -n {NS}") == second.ok(f"logs {pod} -n {NS}")


def test_same_seed_after_the_same_actions(twins):
    first, second, _ = twins
    for served in (first, second):
        served.ok(f"rollout restart deploy/frontend -n {NS}")
        served.ok(f"rollout status deploy/frontend -n {NS}")
        served.ok(f"delete pod -n {NS} -l io.kompose.service=search")
    for command in ("get pods -A -o yaml", "get events -A -o wide", "get rs -A"):
        assert first.ok(command) == second.ok(command)


def test_another_seed_names_things_differently(twins):
    first, _, other = twins
    names = set(first.ok(f"get pods -n {NS} -o name").split())
    others = set(other.ok(f"get pods -n {NS} -o name").split())
    assert len(names) == len(others) == 19 and not names & others
    assert first.ok(f"get svc -n {NS} -o wide") != other.ok(f"get svc -n {NS} -o wide")
