"""The optional LLM-judge reward dimension: any model spec reads a scenario and its execution evidence, scores 0-10.

The twin measures the other dimensions; a judge adds what execution cannot see (is the scenario realistic and
instructive?). Its prompt lives in judge.yaml.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from string import Template

import yaml

from aoi.evolve.execute import Record

PROMPTS = Path(__file__).with_name("judge.yaml")
SCORE = re.compile(r"\{[^{}]*\"score\"[^{}]*\}")
NUMBER = re.compile(r"\b(10|[0-9])(?:\.\d+)?\b")
MAX_EVIDENCE = 4000  # characters of evidence shown to the judge (outputs are long; the verdicts are what matter)


@cache
def prompts() -> dict:
    """Return the judge's system and user templates."""
    return yaml.safe_load(PROMPTS.read_text())


def messages(record: Record, evidence: str) -> list[dict]:
    """Return the judge's chat messages for one executed scenario and a summary of its evidence."""
    text = prompts()
    user = Template(text["user"]).substitute(scenario=json.dumps(record.scenario.to_dict(), indent=1),
                                             evidence=evidence[:MAX_EVIDENCE])
    return [{"role": "system", "content": text["system"]}, {"role": "user", "content": user}]


def parse_score(reply: str) -> tuple[float, str] | None:
    """Return (score in [0, 1], reason) from a judge's reply, or None when it holds no score.

    Example:
        >>> parse_score('{"score": 7, "reason": "plausible"}'), parse_score("8/10"), parse_score("no idea")
        ((0.7, 'plausible'), (0.8, ''), None)
    """
    found = SCORE.search(reply)
    if found:
        try:
            data = json.loads(found.group(0))
            return min(max(float(data["score"]), 0.0), 10.0) / 10, str(data.get("reason", ""))
        except (ValueError, TypeError, KeyError):
            pass
    number = NUMBER.search(reply)
    return (int(number.group(1)) / 10, "") if number else None


def ask_judge(record: Record, model, evidence: str = "") -> tuple[float, str]:
    """Return (score in [0, 1], the judge's reason) for one executed record; 0 with the reason when it fails.

    Example:
        >>> from aoi.models.replay import ReplayModel
        >>> ask_judge(record, ReplayModel(['{"score": 9, "reason": "ok"}']))  # doctest: +SKIP
        (0.9, 'judge replay: ok')
    """
    from aoi.models.base import ModelError

    name = getattr(model, "name", "model")
    try:
        reply = model.complete(messages(record, evidence), role="judge").text
    except ModelError as exc:
        return 0.0, f"the judge {name} failed: {exc}"
    parsed = parse_score(reply)
    if parsed is None:
        return 0.0, f"the judge {name}'s reply holds no score: {reply[:200]!r}"
    return round(parsed[0], 4), f"judge {name}: {parsed[1] or reply[:200]}"
