"""Build what an agent is told at reset from prompts.yaml: the task description, instructions and action docs."""

from __future__ import annotations

import functools
from pathlib import Path
from string import Template

import yaml

from aoi.problems.model import Problem

PROMPTS = Path(__file__).with_name("prompts.yaml")
ACTIONS = ("exec_shell", "get_logs", "get_metrics", "get_traces", "read_metrics", "read_traces", "submit")


@functools.cache
def _prompts() -> dict:
    return yaml.safe_load(PROMPTS.read_text())


def app_summary(app: str, namespace: str) -> str:
    """Return the summary of an app: name, namespace, description and what it does.

    Example:
        >>> app_summary("hotel-reservation", "test-hotel-reservation").splitlines()[:2]
        ['Service: Hotel Reservation', 'Namespace: test-hotel-reservation']
    """
    data = _prompts()["apps"].get(app)
    if data is None:
        raise KeyError(f"no summary for app {app!r}; add it under `apps:` in {PROMPTS}")
    operations = "\n".join(f"- {op}" for op in data["operations"])
    return Template(_prompts()["summary"]).substitute(name=data["name"], namespace=namespace,
                                                      description=data["description"], operations=operations)


def action_docs(task_type: str) -> dict[str, str]:
    """Return each action's documentation for a task type, in AIOpsLab's (alphabetical) order."""
    docs = _prompts()["actions"]
    return {name: docs[name][task_type] if name == "submit" else docs[name] for name in ACTIONS}


def task_prompt(problem: Problem) -> tuple[str, str, dict[str, str]]:
    """Return (description, instructions, actions) for a problem, as AIOpsLab's init_problem does.

    Example:
        >>> from aoi.problems import make
        >>> desc, instructions, actions = task_prompt(make("scale_pod_zero_social_net-mitigation-1"))
        >>> list(actions)[-1], "submit()" in instructions
        ('submit', True)
    """
    prompts = _prompts()
    summary = app_summary(problem.app, problem.namespace)
    description = Template(prompts["descriptions"][problem.task_type]).substitute(app_summary=summary)
    instructions = prompts["instructions"]["common"] + "\n\n" + prompts["instructions"]["submit"][problem.task_type]
    return description, instructions, action_docs(problem.task_type)
