"""Logs: the error patterns that name a cause (database auth, TLS, refused connections, wrong binary, panics)."""

from __future__ import annotations

import re

from aoi.models.expert.analyzers import Evidence
from aoi.models.expert.analyzers.table import owner

DB_URL = re.compile(r"(?:database URL:?\s*|mongodb://(?:[^@/\s]+@)?)(?P<host>[A-Za-z][\w.-]*):(?P<port>\d+)")
PATTERNS = (  # (kind, regex); the first match of each kind counts, in this order of strength
    ("db_unauthorized", re.compile(r"not authorized on (?P<db>[\w.-]+) to execute")),
    ("db_auth_failed", re.compile(r"SASL authentication|[Aa]uthentication failed|UserNotFound")),
    ("db_unreachable", re.compile(r"No suitable servers found.*?'(?P<host>[\w.-]+):(?P<port>\d+)'|"
                                  r"no reachable servers|server selection (?:error|timeout)")),
    ("tls_in_use", re.compile(r"ssl requireSSL|requireTLS|TLS handshake failed|SSL handshake")),
    ("refused", re.compile(r"<Host: (?P<host>[\w.-]+) Port: (?P<port>\d+)>: Connection refused|"
                           r"dial tcp (?P<ip>[\d.]+):(?P<ipport>\d+): connect: connection refused")),
    ("unresolved", re.compile(r"lookup (?P<name>[\w.-]+)(?: on [\d.:]+)?: no such host")),
    ("fatal", re.compile(r"\b(?:FTL|PNC)\b|^panic:|\bFATAL\b|Segmentation fault", re.MULTILINE)),
    ("index_retry", re.compile(r"Failed to create mongodb index")),
)
IDENTITY = re.compile(r"cmd/(?P<bin>[\w-]+)/main\.go|service name: (?P<svc>[\w-]+) \|")


def analyze(pod: str, text: str) -> list[Evidence]:
    """Classify one pod's log; evidence is about the pod's workload unless the log names another component.

    Example:
        >>> log = ("INF cmd/orders/main.go:36 > Read database URL: orders-db:27017\\n"
        ...        "FTL cmd/orders/db.go:45 > not authorized on orders to execute command { insert: 1 }\\n")
        >>> [(e.kind, e.component) for e in analyze("orders-6b4b89b5f5-xbcdz", log)]
        [('db_unauthorized', 'orders-db'), ('fatal', 'orders')]
    """
    me, url = owner(pod), DB_URL.search(text)
    found = []
    for kind, pattern in PATTERNS:
        match = pattern.search(text)
        if match:
            found.append(_evidence(kind, me, pod, match, url, text))
    return found + _identity(me, pod, text)


def _evidence(kind: str, me: str, pod: str, match: re.Match, url: re.Match | None, text: str) -> Evidence:
    """Build the evidence of one matched pattern."""
    groups = {k: v for k, v in match.groupdict().items() if v}
    line = _line(text, match.start())
    facts = {"pod": pod, "client": me, "line": line[:240], **groups}
    if url:
        facts.setdefault("host", url.group("host"))
        facts.setdefault("port", url.group("port"))
    target = {"db_unauthorized": facts.get("host"), "db_auth_failed": facts.get("host"),
              "db_unreachable": facts.get("host"), "refused": facts.get("host")}.get(kind) or me
    if kind == "refused" and "ip" in groups:
        target = me
    return Evidence(kind, target, f"{pod} logs: {line[:200]}", facts)


def _identity(me: str, pod: str, text: str) -> list[Evidence]:
    """Return evidence when a pod's log shows it runs another service's binary."""
    names = {m.group("bin") or m.group("svc") for m in IDENTITY.finditer(text)}
    names = {n for n in names if n}
    if len(names) != 1 or _norm(next(iter(names))) == _norm(me):
        return []
    runs = next(iter(names))
    port = re.search(r"Read target port: (\d+)", text)
    detail = f"{pod} starts as {runs!r}" + (f" and listens on {port.group(1)}" if port else "")
    return [Evidence("wrong_binary", me, detail, {"pod": pod, "runs": runs, "port": port.group(1) if port else None})]


def _line(text: str, index: int) -> str:
    """Return the log line around a position."""
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start:end if end >= 0 else len(text)].strip()


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())
