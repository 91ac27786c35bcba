"""Time env.step on inputs that used to hang or raise: interactive kubectl, NUL bytes, huge commands.

Prints, per input and role, the wall seconds of one step and whether it answered or raised (the exception's type).
Run it on this checkout, or on another with PYTHONPATH=/path/to/src.

    .venv/bin/python benchmarks/step_robustness.py
"""

from __future__ import annotations

import time

import aoi
from aoi.env import make
from aoi.problems import solutions

NS = "test-social-network"
INPUTS = {
    "edit (-n before)": solutions.shell(f"kubectl -n {NS} edit deploy user-service"),
    "port-forward": solutions.shell(f"kubectl -n {NS} port-forward svc/user-service 18080:9090"),
    "get -w": solutions.shell(f"kubectl get pods -n {NS} -w"),
    "exec -it, no command": solutions.shell(f"kubectl exec -it deploy/user-service -n {NS}"),
    "NUL byte": solutions.shell(f"kubectl get pods -n {NS}\x00"),
    "1 MB argument": solutions.shell(f"kubectl get pods -n {NS} -l " + "a" * 1_000_000),
    "2 MB of pipes": solutions.shell(f"kubectl get pods -n {NS} -l " + "a|" * 1_000_000),
    "get_metrics duration 'abc'": solutions.action("get_metrics", NS, "abc"),
}


def main() -> None:
    print(f"aoi from {aoi.__file__}")
    env = make("k8s_target_port-misconfig-localization-1", max_steps=1000)
    env.reset()
    for role in ("probe", None):
        for name, action in INPUTS.items():
            started = time.monotonic()
            try:
                outcome = env.step(action, role=role)[0].splitlines()[0][:90]
            except Exception as exc:  # noqa: BLE001 - a crash is a figure here
                outcome = f"RAISED {type(exc).__name__}"
            print(f"{role or 'None':5} {name:28} {time.monotonic() - started:7.2f} s  {outcome}", flush=True)
    env.close()


if __name__ == "__main__":
    main()
