"""The step budget as a wrapper (Gymnasium's TimeLimit): AIOpsLab's orchestrator loop around an Env.

AIOpsLab's orchestrator, not its problem, owns `max_steps`: it appends "Please take the next action" to every
observation while the episode goes on, and judges the episode when the loop ends without a submission. StepLimit
does both, so the Env inside knows nothing of budgets.
"""

from __future__ import annotations

from aoi.tasks import NEXT_SUFFIX

OWN = ("env", "max_steps")  # the wrapper's attributes; every other one is the env's


class StepLimit:
    """An Env with a step budget: the step that spends it ends (truncates) and judges the episode.

    Every other attribute (problem, trace, results, done, steps, backend, seconds_per_step, ...) is the wrapped
    env's, read and set through the wrapper, so a caller never sets one on the wrapper by mistake.

    Example:
        >>> env = StepLimit(env, max_steps=30)  # doctest: +SKIP
        >>> observation, reward, terminated, truncated, info = env.step(action)  # doctest: +SKIP
    """

    def __init__(self, env, max_steps: int):
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}; pass --max-steps 1 or more")
        self.env, self.max_steps = env, max_steps

    @property
    def unwrapped(self):
        """Return the Env inside."""
        return self.env

    def __getattr__(self, name: str):
        """Read any other attribute (problem, trace, results, done, steps, seed, backend, ...) from the env."""
        if name in OWN:  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self.env, name)

    def __setattr__(self, name: str, value) -> None:
        """Set the wrapper's own attributes here, any other on the env (env.seconds_per_step = 0 reaches it)."""
        if name in OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self.env, name, value)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        """Start a fresh episode with a full budget; info also says `max_steps`."""
        observation, info = self.env.reset(seed=seed, options=options)
        return observation, {**info, "max_steps": self.max_steps}

    def step(self, action: str, role: str | None = None) -> tuple[str, float, bool, bool, dict]:
        """Play one action; past the budget, end the episode (truncated) instead of asking for the next action.

        info's `suffix` is the text appended to the action's observation: NEXT_SUFFIX while the episode goes on, ""
        once it ended, so a caller that wants the action's own text cuts exactly that.
        """
        observation, reward, terminated, truncated, info = self.env.step(action, role)
        if not (terminated or truncated) and self.env.steps >= self.max_steps:
            reward, truncated = self.env.end(info), True
        suffix = "" if terminated or truncated else NEXT_SUFFIX
        return f"{observation}{suffix}", reward, terminated, truncated, {**info, "suffix": suffix}

    def close(self) -> None:
        """Close the env inside."""
        self.env.close()

    def __enter__(self) -> StepLimit:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
