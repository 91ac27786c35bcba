"""AIOpsLab's submit signatures: which submissions it accepts, what it answers to the rest, what it records.

AIOpsLab's orchestrator stores the solution before calling the task's `submit` (orchestrator.py:126-127), then calls
it with the parsed arguments (orchestrator.py:130). `submit` is a static method per task type that checks nothing
but Python's own call rules (actions/{detection,localization,analysis,mitigation}.py:16-30), so a wrong argument
count or an unknown keyword raises TypeError, whose text is the observation (orchestrator.py:137-138); the loop goes
on (orchestrator.py:168-173) and the step counts, while the stored solution stays. Wrong *types* are accepted and
judged by the task's eval ("Invalid Format", 0.0, False). The signatures are declared in aoi.tasks with AIOpsLab's
class and parameter names, so that Python words the TypeError exactly as it does there (Python 3.11:
"<Class>.submit() takes ...").
"""

from __future__ import annotations

from typing import Any

from aoi.tasks import task


def refusal(task_type: str, args: list, kwargs: dict) -> str | None:
    """Return AIOpsLab's observation for a submit its signature refuses, or None when it accepts the call.

    Example:
        >>> refusal("detection", ["Yes"], {}) is None, refusal("detection", [], {"has_anomaly": "Yes"}) is None
        (True, True)
        >>> refusal("mitigation", ["done"], {})
        'MitigationActions.submit() takes 0 positional arguments but 1 was given'
    """
    try:
        task(task_type).submit(*args, **kwargs)
    except TypeError as exc:
        return str(exc)
    return None


def solution(args: list) -> Any:
    """Return what AIOpsLab stores for a submit: the one positional argument, else the list (keywords dropped).

    Example:
        >>> solution(["Yes"]), solution([]), solution(["a", "b"])
        ('Yes', [], ['a', 'b'])
    """
    return args[0] if len(args) == 1 else list(args)
