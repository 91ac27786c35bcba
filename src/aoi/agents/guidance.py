"""Guidance at Observer time: entries mined from failed runs, the most similar to the current findings, in the prompt.

A guidance file (JSON Lines, written by `aoi evolve guidance`) holds one `Entry` per line: a trigger (task type,
symptoms, keywords), a lesson, and the trajectories it came from. `Guide.select` ranks the entries of the task's type
by the cosine similarity of their text to the Observer's situation (task, newest findings, hypotheses), plus a small
bonus per trigger keyword the situation names, and keeps the top k that fit a token budget; `Guide.block` renders
them for the prompt (prompts.yaml, observer.guidance). Without a guide the Observer's prompt is unchanged.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from aoi.models.embedder import Embedder, cosine, default_embedder
from aoi.models.tokens import count_tokens

KEYWORD_WEIGHT = 0.1  # a situation naming all of an entry's keywords outranks a slightly closer generic lesson
ANY_TASK = "any"  # an entry for every task type
FINDINGS_USED, FINDING_CHARS = 2, 600  # the newest findings (characters of each) a situation holds


@dataclass(kw_only=True)
class Entry:
    """One lesson mined from failed episodes, and when it applies."""

    id: str
    task_type: str  # detection | localization | analysis | mitigation | any
    lesson: str
    symptoms: list[str] = field(default_factory=list)  # what the failed episodes saw (error lines, states)
    keywords: list[str] = field(default_factory=list)  # app, components, family words, commands
    provenance: list[str] = field(default_factory=list)  # trajectory ids the lesson was mined from
    kind: str = ""  # what went wrong: wrong_answer, refused, repeated, budget_exhausted, format_error, ...
    source: str = "miner"  # the deterministic miner, or the model spec that wrote the lesson
    evidence: list[str] = field(default_factory=list)  # the facts the lesson rests on

    def to_json(self) -> dict:
        """Return the entry as a guidance-file line: {id, trigger: {task_type, symptoms, keywords}, lesson, ...}."""
        data = asdict(self)
        trigger = {key: data.pop(key) for key in ("task_type", "symptoms", "keywords")}
        return {"id": data.pop("id"), "trigger": trigger, **data}

    @classmethod
    def from_json(cls, data: dict) -> Entry:
        """Rebuild an entry from a guidance-file line; KeyError/TypeError when a field is missing or wrong."""
        trigger = data["trigger"]
        return cls(id=str(data["id"]), task_type=str(trigger["task_type"]), lesson=str(data["lesson"]),
                   symptoms=list(trigger.get("symptoms") or []), keywords=list(trigger.get("keywords") or []),
                   provenance=list(data.get("provenance") or []), kind=str(data.get("kind", "")),
                   source=str(data.get("source", "miner")), evidence=list(data.get("evidence") or []))

    def text(self) -> str:
        """Return what retrieval compares with the situation: task type, symptoms, keywords and lesson."""
        return f"{self.task_type}: {'; '.join(self.symptoms)}. {' '.join(self.keywords)}. {self.lesson}"


def load_guidance(path: str | Path) -> list[Entry]:
    """Read a guidance file; ValueError naming the line when one is not a guidance entry.

    Example:
        >>> import tempfile; p = Path(tempfile.mkdtemp()) / "g.jsonl"
        >>> _ = p.write_text(json.dumps({"id": "g1", "trigger": {"task_type": "detection"}, "lesson": "Look."}))
        >>> [e.id for e in load_guidance(p)]
        ['g1']
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"guidance file {path} does not exist; write one with `aoi evolve guidance --from RUN_DIR "
                         f"--out {path}`")
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entries.append(Entry.from_json(json.loads(line)))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}:{number} is not a guidance entry ({type(exc).__name__}: {exc}); each line "
                             "needs id, trigger.task_type and lesson (see `aoi evolve guidance`)") from None
    return entries


def write_guidance(entries: list[Entry], path: str | Path) -> None:
    """Write entries as a guidance file, one JSON object per line."""
    lines = [json.dumps(entry.to_json(), ensure_ascii=False) for entry in entries]
    Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


class Guide:
    """Pick the entries most similar to the Observer's situation, within top_k and a token budget."""

    def __init__(self, entries: list[Entry], embedder: Embedder | None = None, top_k: int = 3,
                 budget_tokens: int = 300):
        self.entries, self.top_k, self.budget = list(entries), top_k, budget_tokens
        self.embedder = embedder or default_embedder()
        self.vectors = self.embedder.embed([entry.text() for entry in self.entries])
        self._queries: dict[str, list[float]] = {}  # situation text -> vector (a prompt is rebuilt each step)

    def ranked(self, task_type: str, situation: str) -> list[tuple[float, Entry]]:
        """Return (score, entry) for the entries of this task type (or any), best first."""
        if situation not in self._queries:
            self._queries[situation] = self.embedder.embed([situation])[0]
        query, words = self._queries[situation], situation.lower()
        scored = [(cosine(query, vector) + KEYWORD_WEIGHT * _named(entry.keywords, words), entry)
                  for entry, vector in zip(self.entries, self.vectors)
                  if entry.task_type in (task_type, ANY_TASK)]
        return sorted(scored, key=lambda pair: -pair[0])

    def select(self, task_type: str, situation: str) -> list[Entry]:
        """Return the top entries, best first, whose lessons fit the token budget together."""
        chosen, used = [], 0
        for _, entry in self.ranked(task_type, situation):
            if len(chosen) == self.top_k:
                break
            cost = count_tokens(line(entry))
            if used + cost <= self.budget:
                chosen.append(entry)
                used += cost
        return chosen


def line(entry: Entry) -> str:
    """Return an entry as one prompt line.

    Example:
        >>> line(Entry(id="g1", task_type="detection", lesson="Check the endpoints."))
        '- [g1] Check the endpoints.'
    """
    return f"- [{entry.id}] {entry.lesson}"


def _named(keywords: list[str], text: str) -> float:
    """Return the share of keywords the (lower-cased) text contains.

    Example:
        >>> _named(["user-service", "mongodb"], "the user-service pod restarts")
        0.5
    """
    return sum(k.lower() in text for k in keywords) / len(keywords) if keywords else 0.0


def situation(description: str, memory) -> str:
    """Return what retrieval compares entries with: the newest findings and hypotheses first (MiniLM reads 256
    tokens), then the task description.

    Example:
        >>> from aoi.agents.memory import Finding, Memory
        >>> m = Memory(); m.add_finding(Finding(1, "probe", "pods?", "user-service CrashLoopBackOff"))
        >>> print(situation("Namespace: test-social-network", m))
        user-service CrashLoopBackOff
        <BLANKLINE>
        Namespace: test-social-network
    """
    newest = [finding.text[:FINDING_CHARS] for finding in memory.findings[-FINDINGS_USED:]][::-1]
    return "\n\n".join([*newest, *memory.decisions[-1:], description])


def mark(trajectory, first: int, shown: list[str]) -> None:
    """Record on the Observer's steps from index `first` on which entries its prompt showed, and on the trajectory
    every entry shown in the episode (first appearance order)."""
    for step in trajectory.steps[first:]:
        if step.role == "observer" and step.messages:
            step.guidance_ids = list(shown)
    trajectory.guidance_ids += [i for i in shown if i not in trajectory.guidance_ids]


@lru_cache(maxsize=4)
def cached_guide(path: str, sha256: str | None, top_k: int, budget_tokens: int) -> Guide:
    """Return the guide of a guidance file, built once per process (eval workers run many episodes)."""
    return Guide(load_guidance(path), top_k=top_k, budget_tokens=budget_tokens)


def guide_of(options) -> Guide | None:
    """Return the guide a config's agent.guidance section asks for, or None when it is unset."""
    if options is None:
        return None
    return cached_guide(str(options.file), options.sha256, options.top_k, options.budget_tokens)
