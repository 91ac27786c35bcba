"""Issue 23's reproduction through env.step and serve-env: a node patched to `spec: null` is accepted and defaulted,
the step answers, the next steps work and the cluster keeps reconciling; a controller that raises costs that step
an error observation at most, never the episode or the session."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from aoi.env import make
from aoi.env.server import create_app
from aoi.problems import solutions
from aoi.twin.controllers.base import Controller

PROBLEM = "noop_detection_hotel_reservation-1"
NS = "test-hotel-reservation"
TOKEN = "test-token-" + "y" * 16
NULL_SPEC = "kubectl patch node kind-worker --type=merge -p '{\"spec\":null}'"
GEO = f"kubectl get pods -n {NS} -l io.kompose.service=geo -o name"


def reconciles(step) -> None:
    """Delete a geo pod through `step`; two steps later a new one runs in its place and the node reads back."""
    pod = step(GEO).split()[0]
    assert "deleted" in step(f"kubectl delete {pod} -n {NS} --wait=false")
    step("kubectl get nodes")
    running = step(f"{GEO} --field-selector=status.phase=Running").split()
    assert running and pod not in running
    assert step("kubectl get node kind-worker -o jsonpath='{.spec}'").startswith("{}")


@pytest.fixture
def env():
    episode = make(PROBLEM, max_steps=100)
    episode.reset()
    yield episode
    episode.close()


@pytest.mark.parametrize("role", [None, "executor"])
def test_a_null_node_spec_through_env_step(env, role):
    def step(command: str) -> str:
        return env.step(solutions.shell(command), role=role)[0]

    assert "node/kind-worker patched" in step(NULL_SPEC)
    reconciles(step)
    assert not env.backend.twin.faults.active, env.backend.twin.faults.report()


class Brittle(Controller):
    """A controller with a bug on every pod: the kubelet and the rest must carry on without it."""

    name = "brittle"
    watches = ("pods",)

    def reconcile(self, twin, key):
        raise KeyError("spec")


def test_a_raising_controller_costs_no_step(env):
    env.backend.twin.add_controller(Brittle())
    observation = env.step(solutions.shell(f"kubectl delete pod -n {NS} -l io.kompose.service=geo --wait=false"))[0]
    assert "deleted" in observation
    running = env.step(solutions.shell(f"{GEO} --field-selector=status.phase=Running"))[0]
    assert running.startswith("pod/geo-")
    assert env.backend.twin.faults.active and "brittle on" in env.backend.twin.faults.report()


def test_a_null_node_spec_through_serve_env():
    app = create_app(TOKEN, max_sessions=2)
    with TestClient(app) as client:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        made = client.post("/sessions", json={"problem_id": PROBLEM, "max_steps": 100}, headers=headers)
        assert made.status_code == 201, made.text
        sid = made.json()["session_id"]

        def step(command: str) -> str:
            answer = client.post(f"/sessions/{sid}/step", json={"action": solutions.shell(command), "role": None},
                                 headers=headers)
            assert answer.status_code == 200, answer.text
            return answer.json()["observation"]

        assert "node/kind-worker patched" in step(NULL_SPEC)
        reconciles(step)
        twin = app.state.pool.get(sid).env.backend.twin
        assert not twin.faults.active, twin.faults.report()


def test_a_failure_of_the_environment_answers_that_step_and_the_episode_goes_on(env):
    env.backend.twin.schedule(1.0, "no-such-controller", ("", "x"))  # a timer nobody can run: advancing raises
    observation = env.step(solutions.shell("kubectl get nodes"))[0]
    assert "kind-worker" in observation  # the action's own output stays
    assert "Error: the environment failed on the simulated time after this action (KeyError" in observation
    assert "kind-worker" in env.step(solutions.shell("kubectl get nodes"))[0]
    assert not env.done
