"""What one action gave: the observation the agent reads, and the facts env.step reports beside it in `info`.

The observation stays AIOpsLab's text; the facts travel as data, so a caller never reads a status back from words
(mini-swe-agent's environment returns `{"output", "returncode"}` the same way).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

TIMEOUT, OUTPUT_LIMIT = "timeout", "output_limit"  # why exec_shell may end a command before it finished


@dataclass(frozen=True)
class Outcome:
    """One action's observation and facts; `info()` is what env.step adds to its info.

    Example:
        >>> Outcome("pod/a\\n", exit_status=0).info()
        {'refused': False, 'exit_status': 0, 'cut': None, 'accepted': None}
    """

    observation: str
    _: KW_ONLY
    refused: bool = False  # exec_shell refused a command before it ran (AOI's command policy, AIOpsLab's blocked list)
    exit_status: int | None = None  # exec_shell's exit status; None when no command ran to its end, or another action
    cut: str | None = None  # exec_shell ended the command early: TIMEOUT (its wall budget) or OUTPUT_LIMIT
    accepted: bool | None = None  # a submit: True when it ended the episode, False when refused; None otherwise

    def info(self) -> dict:
        """Return the facts as env.step's info keys."""
        return {"refused": self.refused, "exit_status": self.exit_status, "cut": self.cut, "accepted": self.accepted}
