"""Label and field selectors, in their query-string and object forms."""

from __future__ import annotations

import re
from collections.abc import Callable

Matcher = Callable[[dict], bool]


class SelectorError(ValueError):
    """A selector that cannot be parsed; the message names the bad term."""


_SET_TERM = re.compile(r"^\s*(!?)([\w./-]+)\s*(?:(in|notin)\s*\(([^)]*)\))?\s*$")
_EQ_TERM = re.compile(r"^\s*([\w./-]+)\s*(==|!=|=)\s*([\w./-]*)\s*$")


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    terms, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += ch
    terms.append(cur)
    return [t for t in terms if t.strip()]


def _label_term(term: str) -> Callable[[dict], bool]:
    """Compile one label selector term."""
    m = _EQ_TERM.match(term)
    if m:
        key, op, value = m.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    m = _SET_TERM.match(term)
    if not m:
        raise SelectorError(f"unable to parse requirement: {term.strip()!r}; use key=value, key!=value, "
                            "key in (a,b), key notin (a,b), key or !key")
    bang, key, op, values = m.groups()
    if op:
        allowed = {v.strip() for v in values.split(",") if v.strip()}
        if op == "in":
            return lambda labels: labels.get(key) in allowed
        return lambda labels: labels.get(key) not in allowed
    if bang:
        return lambda labels: key not in labels
    return lambda labels: key in labels


def parse_label_selector(text: str | None) -> Matcher:
    """Compile a label selector string into a predicate over objects.

    Example:
        >>> match = parse_label_selector("app=geo,tier notin (db)")
        >>> match({"metadata": {"labels": {"app": "geo"}}})
        True
    """
    terms = [_label_term(t) for t in _split_terms(text or "")]
    return lambda obj: all(t((obj.get("metadata") or {}).get("labels") or {}) for t in terms)


def selector_matches(selector: dict | None, labels: dict | None) -> bool:
    """Tell whether a LabelSelector object (matchLabels, matchExpressions) matches labels; empty matches all."""
    labels = labels or {}
    selector = selector or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in labels
        if (op == "In" and labels.get(key) not in values) or (op == "NotIn" and present and labels[key] in values):
            return False
        if (op == "Exists" and not present) or (op == "DoesNotExist" and present):
            return False
    return True


def map_matches(selector: dict | None, labels: dict | None) -> bool:
    """Tell whether a plain map selector (Service.spec.selector) matches labels; an empty map matches nothing."""
    if not selector:
        return False
    labels = labels or {}
    return all(labels.get(k) == v for k, v in selector.items())


def selector_string(selector: dict | None) -> str:
    """Render a LabelSelector object as a query string (the inverse of parse_label_selector)."""
    selector = selector or {}
    parts = [f"{k}={v}" for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), ",".join(expr.get("values") or [])
        parts.append({"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})",
                      "Exists": key, "DoesNotExist": f"!{key}"}.get(op, key))
    return ",".join(parts)


def _field_value(obj: dict, path: str) -> str:
    """Read a dotted field path as the API server compares it (missing -> empty string)."""
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def parse_field_selector(text: str | None) -> Matcher:
    """Compile a field selector string (=, ==, != over dotted paths) into a predicate.

    Example:
        >>> parse_field_selector("status.phase!=Failed")({"status": {"phase": "Running"}})
        True
    """
    checks = []
    for term in _split_terms(text or ""):
        m = re.match(r"^\s*([\w.]+)\s*(==|!=|=)\s*(.*?)\s*$", term)
        if not m:
            raise SelectorError(f"invalid field selector term {term.strip()!r}; use field=value or field!=value")
        path, op, value = m.groups()
        checks.append((path, op == "!=", value))
    return lambda obj: all((_field_value(obj, p) != v) if neg else (_field_value(obj, p) == v) for p, neg, v in checks)
