"""The failure-trajectory Evolver: failed episodes mined into guidance entries (`aoi evolve guidance`).

Each failed episode (aoi.evolve.failures) gives up to four entries: what was wrong with its answer (wrong answer,
no submission, bad format), which calls failed (wrong arguments, missing commands), were refused, were repeated.
A lesson is built from that episode's evidence (the answer against the expected one, the error lines seen, the calls
made or never made), so two episodes that failed the same way give the same entry id and merge; entries whose lessons
say nearly the same thing (embedding cosine >= SIMILAR, same task type and kind) merge too. `--model SPEC` has a model
rewrite each lesson from the same evidence (guidance.yaml); the trigger and provenance stay the miner's.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import yaml

from aoi.agents.guidance import Entry
from aoi.agents.observer import ANSWER_FORMATS
from aoi.evolve.failures import Failure, failure_of, run_trajectories
from aoi.models.embedder import Embedder, cosine, default_embedder
from aoi.tasks import TASK_TYPES, TaskType

SIMILAR = 0.95  # lessons this close (cosine) say the same thing
PROMPTS = Path(__file__).with_name("guidance.yaml")
LESSON_CHARS = 600
VIEWS = {"logs": r"logs", "events": r"events|describe", "services and endpoints": r"endpoints|\bsvc\b|service",
         "configmaps and secrets": r"configmap|secret", "metrics and traces": r"metrics|traces|\btop\b"}


def mine(runs: list[str | Path], embedder: Embedder | None = None) -> tuple[list[Entry], list[Failure]]:
    """Return the deduplicated guidance entries of the runs' failed episodes, and those failures.

    Example:
        >>> mine(["runs/eval-small"])  # doctest: +SKIP
        ([Entry(id='g-...', task_type='detection', lesson="Answered 'No' although ...", ...)], [Failure(...)])
    """
    failures = [f for run in runs for traj in run_trajectories(run) if (f := failure_of(traj)) is not None]
    return dedupe([entry for f in failures for entry in lessons(f)], embedder), failures


def lessons(f: Failure) -> list[Entry]:
    """Return the entries one failure teaches: its answer, its failed, refused and repeated calls."""
    entries = [_answer(f)]
    if f.failed:
        call, why = f.failed[0]
        lesson = (f"Calls failed ({len(f.failed)}x), e.g. `{_cut(call)}`: {why}. Ask only for what the sub-agent's "
                  "tools can do (their declared arguments, kubectl and the commands that exist in the containers).")
        entries.append(_entry(f, "failed_call", call.split("(")[0].split(" -")[0], lesson, [call]))
    if f.refused:
        call, why = f.refused[0]
        lesson = (f"Calls were refused ({len(f.refused)}x), e.g. `{_cut(call)}`: {why}. The probe is read-only and "
                  "interactive commands are refused: give instructions the sub-agent can carry out with its tools.")
        entries.append(_entry(f, "refused", _verb(call), lesson, [call]))
    if f.repeated:
        call, times = f.repeated.most_common(1)[0]
        lesson = (f"The call `{_cut(call)}` was repeated {times} more time(s) within one instruction ({f.wasted} "
                  "step(s) of the episode brought nothing new): its output does not change; ask for another "
                  "resource, its logs or its events instead.")
        entries.append(_entry(f, "repeated", call, lesson, [call]))
    return entries


def _answer(f: Failure) -> Entry:
    """Return the entry on the episode's answer (wrong, never submitted, or in the wrong format)."""
    if f.reason == "budget_exhausted":
        return _entry(f, f.reason, f.family, f"Ran out of environment actions after {f.steps} without submitting; "
                      f"{f.wasted} step(s) brought nothing new. Submit with the evidence at hand before the last "
                      "actions run out.", f.commands[-2:])
    if f.reason == "format_error":
        return _entry(f, f.reason, "", f"The submission {_show(f.submitted)} was not in the {f.task_type} format; "
                      f"submit {ANSWER_FORMATS[f.task_type]}.", [])
    if f.expected is None and f.task_type != TaskType.MITIGATION:  # a problem the registry does not know: calls only
        lesson = (f"The answer {_show(f.submitted)} was judged wrong after {len(f.commands)} call(s); they never "
                  f"looked at {_unseen(f)}.")
    else:
        lesson = {TaskType.DETECTION: _detection, TaskType.LOCALIZATION: _localization, TaskType.ANALYSIS: _analysis,
                  TaskType.MITIGATION: _mitigation}[f.task_type](f)
    return _entry(f, f.reason, f"{f.family}|{_show(f.expected)}", lesson, f.components[:1])


def _detection(f: Failure) -> str:
    """Say why a detection answer was wrong."""
    if f.expected == "No":
        seen = f" Lines such as \"{f.symptoms[0]}\" were normal here." if f.symptoms else ""
        return (f"{_answered(f)} on a healthy {f.app}.{seen} Answer Yes only on evidence of a failing "
                "component (crashes, errors in its logs, refused connections).")
    if f.symptoms:
        return (f"{_answered(f)} although {f.app} had a fault ({_words(f.family)}); the probe had "
                f"seen \"{f.symptoms[0]}\": such a line is a fault, not noise.")
    return (f"{_answered(f)} although {f.app} had a fault ({_words(f.family)}); its {len(f.commands)} "
            f"call(s) showed no error line. Before answering No also check {_unseen(f)}.")


def _localization(f: Failure) -> str:
    """Say why a localization answer was wrong."""
    name = f.components[0] if f.components else "?"
    said = f"Named {_show(f.submitted)} but the faulty component was {name} ({_words(f.family)})."
    if f.seen(name):
        return (f"{said} The calls did show {name}: blame the component whose own state or configuration is wrong, "
                "not the callers that suffer from it.")
    return f"{said} No call looked at {name}: inspect every service of the namespace ({_unseen(f)}) before naming one."


def _analysis(f: Failure) -> str:
    """Say why an analysis answer was wrong."""
    expected = f.expected or {}
    said = (f"Classified the fault as {_show(f.submitted)} but it was {expected.get('system_level')} / "
            f"{expected.get('fault_type')} ({_words(f.family)} on {', '.join(f.components[:1]) or f.app}).")
    return said + (f" The evidence was \"{f.symptoms[0]}\"." if f.symptoms else f" Also check {_unseen(f)}.")


def _mitigation(f: Failure) -> str:
    """Say why a mitigation did not hold."""
    where = f"{_words(f.family)} on {', '.join(f.components[:1]) or f.app}"
    did = f"the executor ran {'; '.join(f'`{c}`' for c in f.changes[:2])}" if f.changes else "nothing was changed"
    return (f"The mitigation did not fix the fault ({where}): {did}. Change the faulty object itself, then verify "
            "(pods Ready, endpoints present, no new error lines) before submitting.")


def _entry(f: Failure, kind: str, signature: str, lesson: str, evidence: list[str]) -> Entry:
    """Build an entry; its id is a digest of task type, kind and signature, so the same failure merges."""
    digest = hashlib.sha1(f"{f.task_type}|{kind}|{signature}".encode()).hexdigest()[:10]
    keywords = [f.app, *_words(f.family).split(), *f.components[:2]]
    return Entry(id=f"g-{digest}", task_type=f.task_type, lesson=lesson, symptoms=f.symptoms[:3],
                 keywords=list(dict.fromkeys(k for k in keywords if k)), provenance=[f.trajectory], kind=kind,
                 evidence=[f"{f.trajectory[:12]} {f.problem_id}: {f.reason}, submitted {_show(f.submitted)}, "
                           f"expected {_show(f.expected)}", *evidence])


def dedupe(entries: list[Entry], embedder: Embedder | None = None) -> list[Entry]:
    """Merge entries with one id, then entries of one task type and kind whose lessons are nearly the same."""
    by_id: dict[str, Entry] = {}
    for entry in entries:
        if entry.id in by_id:
            _merge(by_id[entry.id], entry)
        else:
            by_id[entry.id] = entry
    kept, vectors = [], []
    merged = list(by_id.values())
    for entry, vector in zip(merged, (embedder or default_embedder()).embed([e.lesson for e in merged])):
        twin = next((k for k, v in zip(kept, vectors) if (k.task_type, k.kind) == (entry.task_type, entry.kind)
                     and cosine(v, vector) >= SIMILAR), None)
        if twin is None:
            kept.append(entry)
            vectors.append(vector)
        else:
            _merge(twin, entry)
    return kept


def _merge(into: Entry, other: Entry) -> None:
    """Add another entry's provenance, symptoms, keywords and evidence to an entry."""
    for name in ("provenance", "symptoms", "keywords", "evidence"):
        setattr(into, name, list(dict.fromkeys(getattr(into, name) + getattr(other, name))))
    into.symptoms = into.symptoms[:5]


def write_lessons(entries: list[Entry], model) -> list[Entry]:
    """Have a model rewrite each entry's lesson from its evidence (an empty reply keeps the miner's lesson)."""
    prompts = yaml.safe_load(PROMPTS.read_text(encoding="utf-8"))
    for entry in entries:
        evidence = json.dumps({"trigger": entry.to_json()["trigger"], "kind": entry.kind, "evidence": entry.evidence,
                               "draft": entry.lesson}, ensure_ascii=False)
        messages = [{"role": "system", "content": prompts["system"]},
                    {"role": "user", "content": prompts["user"].replace("$evidence", evidence)}]
        text = model.complete(messages, role="evolver").text
        lesson = " ".join(str(text or "").split())[:LESSON_CHARS]
        if lesson:
            entry.lesson, entry.source = lesson, getattr(model, "name", "model")
    return entries


def _cut(call: str, chars: int = 100) -> str:
    """Return a call cut to `chars` characters for a lesson.

    Example:
        >>> _cut("kubectl get pods -n x", 11)
        'kubectl get...'
    """
    return call if len(call) <= chars else call[:chars].rstrip() + "..."


def _answered(f: Failure) -> str:
    """Say what the episode submitted."""
    return "Submitted no answer" if f.submitted is None else f"Answered {_show(f.submitted)}"


def _show(value) -> str:
    """Render an answer compactly (JSON; None: no answer)."""
    return "no answer" if value is None else json.dumps(value, ensure_ascii=False)


def _words(family: str) -> str:
    """Return a family name as words.

    Example:
        >>> _words("k8s_target_port-misconfig")
        'k8s target port misconfig'
    """
    return " ".join(w for w in re.split(r"[_\-\s]+", family) if len(w) > 2 and w not in TASK_TYPES and not w.isdigit())


def _unseen(f: Failure) -> str:
    """Name the kinds of evidence no call of the episode looked at (or say every kind was looked at)."""
    calls = " ".join(f.commands).lower()
    missing = [view for view, pattern in VIEWS.items() if not re.search(pattern, calls)]
    return ", ".join(missing) if missing else "each service's configuration against its pods"


def _verb(call: str) -> str:
    """Return the first two words of a call (what kind of call it was)."""
    return " ".join(call.split()[:2])
