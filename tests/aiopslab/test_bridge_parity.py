"""The bridge hands AIOpsLab every reply, as AIOpsLab's agent contract expects (orchestrator.py at ddf7e40).

AIOpsLab records every get_action answer (orchestrator.py:108-109) and counts the assistant items as steps
(tasks/base.py:48); a parse error is answered with its text (:117-121); a submit its signature refuses is answered
with the TypeError text and the loop goes on (:126-138, :168-173); only an accepted submit ends the loop.
"""

from __future__ import annotations

import asyncio
import threading

from aoi.aiopslab import AOIAgent
from aoi.aiopslab.bridge import END, REFUSED_NOTE, BridgeEnv
from aoi.config import load_config
from aoi.models.replay import ReplayModel
from aoi.problems import solutions

FIRST = "Please take the next action"  # AIOpsLab's orchestrator: the first observation, and every later one's end
SUFFIX, SUBMITTED = "\n" + FIRST, "1"  # SUBMITTED: SubmissionStatus.VALID_SUBMISSION
REFUSED_SUBMIT = "DetectionActions.submit() takes 1 positional argument but 2 were given"


def bridge(max_steps: int = 20) -> BridgeEnv:
    return BridgeEnv(None, "task", "instructions", {}, max_steps=max_steps, timeout=5)


def aiopslab(env: BridgeEnv, answers: list, sent: list) -> threading.Thread:
    """Play AIOpsLab for a few replies: an answer string goes back; None ends its loop (the runner closes)."""
    def play():
        for answer in answers:
            sent.append(env.outbox.get(timeout=5))
            if answer is None:
                env.close()
                return
            env.inbox.put(answer)
    worker = threading.Thread(target=play, daemon=True)
    worker.start()
    return worker


def test_a_reply_our_parser_rejects_goes_to_aiopslab_and_is_charged():
    env, sent = bridge(), []
    aiopslab(env, ["Error parsing response: Format validation failure. (AIOpsLab's own words)"], sent)
    reply = "```bash\nexec_shell('kubectl get pods')\n```"
    observation, _, terminated, truncated, info = env.step(reply)
    assert sent == [reply] and env.steps == 1 and info["sent"]
    assert observation == "Error parsing response: Format validation failure. (AIOpsLab's own words)" + SUFFIX
    assert not terminated and not truncated


def test_a_submit_aiopslab_refuses_comes_back_to_the_team_and_an_accepted_one_ends():
    env, sent = bridge(), []
    aiopslab(env, [REFUSED_SUBMIT, None], sent)
    refused = env.step("```\nsubmit('Yes', 'No')\n```", "observer")
    assert refused[0] == REFUSED_SUBMIT + SUFFIX and refused[2:4] == (False, False) and not env.done
    accepted = env.step(solutions.action("submit", "Yes"), "observer")
    assert accepted[0] == SUBMITTED and accepted[2] is True and env.done
    assert len(sent) == 2 and [e["observation"] for e in env.exchanges] == [REFUSED_SUBMIT, "1"]


def test_a_submit_on_the_last_step_ends_without_waiting():
    env = bridge(max_steps=1)
    observation, _, terminated, _, _ = env.step(solutions.action("submit", "Yes"), "observer")
    assert observation == SUBMITTED and terminated and env.done and env.outbox.get_nowait()


class Scripted(AOIAgent):
    """AOI's agent with a scripted team: each (reply, role) goes through the bridge as the runtime would send it."""

    def __init__(self, script: list[tuple[str, str | None]]):
        config = load_config(overrides={"model": "expert", "env.max_steps": 30}, environ={})
        super().__init__(config, {"observer": ReplayModel([])}, timeout=60)
        self.script, self.seen = script, []

    def _work(self) -> None:
        """Play the script on the bridge; END tells get_action the team is done."""
        try:
            for reply, role in self.script:
                self.seen.append(self.env.step(reply, role))
        finally:
            self.env.outbox.put(END)


def test_every_reply_is_a_step_in_aiopslabs_history(StandIn):
    ns = "test-hotel-reservation"
    agent = Scripted([(solutions.shell(f"kubectl delete pod -n {ns} -l x=y"), "probe"),
                      (solutions.shell(f"kubectl get pods -n {ns}"), "probe"),
                      ("```\nsubmit('Yes', 'No')\n```", "observer"),
                      (solutions.action("submit", "Yes"), "observer")])
    orch = StandIn()
    orch.register_agent(agent, name="aoi")
    agent.init_context(*orch.init_problem("wrong_bin_usage-detection-1"), problem_id="wrong_bin_usage-detection-1")
    outcome = asyncio.run(orch.start_problem(max_steps=30))
    agent.finish(outcome["results"])
    env_texts = [item["content"] for item in outcome["history"] if item["role"] == "env"]
    assert outcome["results"]["steps"] == len(agent.exchanges) == 4 and outcome["final_state"] == "1"
    assert outcome["history"][0]["content"].startswith(REFUSED_NOTE)  # charged; AIOpsLab ran nothing:
    assert env_texts[0].startswith("Error parsing response: ")
    assert agent.seen[0][0].startswith("Error: Forbidden by AOI's command policy (probe role)")
    assert env_texts[2] == agent.seen[2][0].removesuffix(SUFFIX) == REFUSED_SUBMIT
    assert agent.seen[3][0] == SUBMITTED and agent.seen[3][2] is True
    assert outcome["results"]["Detection Accuracy"] == "Correct" and FIRST not in agent.exchanges[1]["observation"]
