"""The simulated shell's resource limits: what one exec may run, hold and generate, so no script holds the twin.

A real container ends a runaway script with its cgroup's limits; the simulated shell runs inside the twin's process,
so it counts instead. Each limit is far above what a diagnosis needs (the expert's commands stay well inside them);
every one ends the script with a message that names it, as a real shell's resource error does.
"""

from __future__ import annotations

STEP_LIMIT = 20_000  # commands one exec may run: `while true` must end, since `sleep` returns at once
DEPTH_LIMIT = 40  # nested function calls, well inside Python's recursion limit
SIZE_LIMIT = 16 * 1024 * 1024  # bytes a variable or an output may hold: `x=$x$x` in a loop must end too
FILE_LIMIT = 16 * 1024 * 1024  # bytes one file may hold: a write loop fills the disk instead of the twin's memory
SUBST_LIMIT = 1024 * 1024  # bytes one $(...) may capture
WORD_LIMIT = STEP_LIMIT  # words one expansion may make: a `for` over more could not finish within STEP_LIMIT anyway
GENERATED_LIMIT = 1024 * 1024  # bytes a generator (seq, a printf width or precision) may make from a few arguments


class StepLimit(Exception):
    """The script ran past a limit: STEP_LIMIT commands, or (the message says which) a size limit."""


def size(limit: int) -> str:
    """Word a byte count for a message.

    Example:
        >>> size(SUBST_LIMIT), size(1500)
        ('1 MiB', '1500 bytes')
    """
    return f"{limit // (1024 * 1024)} MiB" if limit % (1024 * 1024) == 0 else f"{limit} bytes"
