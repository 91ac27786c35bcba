"""A stand-in for AIOpsLab's Orchestrator that follows its agent contract (reference/aiopslab.md section 1).

The "problem" is one of AOI's twin environments. The loop is AIOpsLab's (aiopslab/orchestrator/orchestrator.py at
ddf7e40): the first observation is "Please take the next action" (:155); each reply is recorded, then parsed with
AIOpsLab's rules (aoi.env.parser; :117-121), a parse error answering with its text; a submit stores `args[0]` when
there is one argument, else the argument list, keyword arguments dropped (:126-127), then calls the task's submit,
whose TypeError for arguments its signature refuses is the answer (:130-138, aoi.env.submission) and the loop goes
on; only an accepted submit ends it (:168-169); any other action runs in the environment with full rights
(role=None; AIOpsLab has no roles) and its text plus "\\nPlease take the next action" is the next observation
(:173); after submit or max_steps the problem is evaluated with the stored solution, submitted or not (:186-188).
"""

from __future__ import annotations

import time

from aoi.env import make, submission
from aoi.env.parser import ParseError, parse
from aoi.env.scoring import score
from aoi.env.verdict import judge_mitigation

NEXT = "Please take the next action"
VALID_SUBMISSION = "1"  # SubmissionStatus.VALID_SUBMISSION as AIOpsLab's session records it


class StandInOrchestrator:
    """AIOpsLab's Orchestrator, as far as an agent can tell, over an AOI twin env."""

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.agent, self.agent_name, self.env = None, None, None
        self.solution, self.history = None, []

    def register_agent(self, agent, name: str = "agent") -> None:
        """Register the agent (must precede init_problem, as in AIOpsLab)."""
        self.agent, self.agent_name = agent, name

    def init_problem(self, problem_id: str) -> tuple[str, str, dict]:
        """Deploy and inject (reset the twin env); return (task description, instructions, actions)."""
        if self.agent_name is None:
            raise RuntimeError("register_agent() must be called before init_problem()")
        self.env = make(problem_id, seed=self.seed, max_steps=10_000)  # the loop below owns the step limit
        self.env.reset()
        self.solution, self.history = None, []
        return self.env.description, self.env.instructions, self.env.actions

    async def start_problem(self, max_steps: int) -> dict:
        """Run AIOpsLab's loop; return history, final state, results and the framework overhead."""
        started, wall = self.env.backend.now(), time.monotonic()
        observation, env_text = NEXT, None
        try:
            for _ in range(max_steps):
                reply = await self.agent.get_action(observation)
                self.history.append({"role": "assistant", "content": reply})
                env_text = self.ask_env(reply)
                self.history.append({"role": "env", "content": env_text})
                if env_text == VALID_SUBMISSION:
                    break
                observation = self.observe(env_text)
            results = self.evaluate(self.solution, self.history, self.env.backend.now() - started)
        finally:
            self.env.close()
        return {"history": self.history, "final_state": env_text, "results": results,
                "framework_overhead": round(time.monotonic() - wall, 3)}

    def ask_env(self, reply: str) -> str:
        """Parse and perform one reply; return the env text."""
        try:
            action = parse(reply)
        except ParseError as exc:
            return str(exc)
        if action.api == "submit":
            self.solution = submission.solution(action.args)
            return submission.refusal(self.env.problem.task_type, action.args, action.kwargs) or VALID_SUBMISSION
        try:
            observation = self.env.step(reply, role=None)[0]
        except Exception as exc:  # noqa: BLE001 - AIOpsLab answers any exception with its text
            return str(exc)
        return observation.removesuffix("\n" + NEXT)

    def observe(self, env_text: str) -> object:
        """Return the next observation (subclasses in tests bend it)."""
        return env_text + "\n" + NEXT

    def evaluate(self, solution, history: list[dict], duration: float) -> dict:
        """Score like problem.eval right after the loop (orchestrator.py:183-188), its waits only (aoi.env.verdict)."""
        problem, mitigation = self.env.problem, None
        if problem.task_type == "mitigation":
            mitigation = judge_mitigation(problem, self.env.backend)[0]
        return score(problem, solution, history, duration, mitigation)
