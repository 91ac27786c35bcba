"""Is a summary grounded in its input? Its names, numbers and quoted lines must all occur in what it summarises."""

from __future__ import annotations

import re

# Identifiers as Kubernetes and logs write them: parts joined by - _ . / : (pod, service, namespace and image names,
# host:port, paths, versions). Plain words are not checked: a summary may say "crashing" in its own words.
NAME = re.compile(r"[A-Za-z0-9]+(?:[-_./:][A-Za-z0-9]+)+")
# Whole numbers, a unit may follow (5d, 300ms, 80%); digits inside names (geo-7d9f8c) and IPs are not numbers.
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?=[A-Za-z%]*(?!\.?\w))")
QUOTED = re.compile(r'"([^"\n]{6,})"|`([^`\n]{6,})`|^> ?(.{6,})$', re.MULTILINE)
ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs"})


def ungrounded(summary: str, source: str) -> list[str]:
    """Return the names, numbers and quoted lines of a summary that do not occur in its source (empty: grounded).

    Names are compared as substrings (a pod's name inside a longer line counts), numbers as whole numbers (8000 is
    not grounded by 18000), quoted text with its whitespace normalised.

    Example:
        >>> pods = "NAME              READY  STATUS            RESTARTS\\ngeo-7d9f8c-x2k4q  0/1    CrashLoopBackOff  5"
        >>> ungrounded("geo-7d9f8c-x2k4q is in CrashLoopBackOff (5 restarts, 0/1 ready)", pods)
        []
        >>> ungrounded("python -m http.server serves port 8000 for geo-7d9f8c-x2k4q", pods)
        ['http.server', '8000']
        >>> ungrounded('the log says "connection refused by mongodb"', pods)
        ['connection refused by mongodb']
    """
    missing = [name for name in _names(summary) if name not in source]
    numbers = set(NUMBER.findall(source))
    missing += [n for n in dict.fromkeys(NUMBER.findall(summary)) if n not in numbers]
    flat = " ".join(source.split())
    missing += [q for q in _quotes(summary) if " ".join(q.split()) not in flat]
    return missing


def _names(text: str) -> list[str]:
    """Return the identifier-like tokens of a text, once each, without pure numbers or abbreviations."""
    found = (m.group(0).rstrip(".:/") for m in NAME.finditer(text))
    return [n for n in dict.fromkeys(found) if not re.fullmatch(r"\d+(?:\.\d+)?", n) and n.lower() not in ABBREVIATIONS]


def _quotes(text: str) -> list[str]:
    """Return the quoted passages of a text ("...", `...` or > lines)."""
    return [next(g for g in m.groups() if g) for m in QUOTED.finditer(text)]

