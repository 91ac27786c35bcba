"""How app-level state shows up in requests: feature flags, MongoDB access, and the error lines programs log."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aoi.apps.catalog import App

GENERIC_ERRORS = {
    "refused": ["error", "client", "connect to {address} failed: connection refused"],
    "timeout": ["error", "client", "call to {callee} timed out after 1s"],
    "unresolved": ["error", "client", "lookup {callee} on 10.96.0.10:53: no such host"],
    "failed": ["error", "client", "{callee} {operation} failed: {detail}"],
}

PLACEHOLDER = re.compile(r"\{(\w+)\}")  # compiled once: every failed request renders an error line


@dataclass
class FlagEffect:
    """What the active flags do to one operation of a component."""

    latency: float = 0.0
    error_rate: float = 0.0
    message: str = ""
    unreachable: set[str] = field(default_factory=set)
    cpu: float = 0.0
    memory_mb: float = 0.0
    flood_rps: float = 0.0


NONE = FlagEffect()


def variant_scale(value) -> float:
    """Turn a flag variant into a number: on=1, off=0, '25%'=0.25, '10sec'=10.

    Example:
        >>> [variant_scale(v) for v in ("on", "off", "75%", "10sec", True)]
        [1.0, 0.0, 0.75, 10.0, 1.0]
    """
    text = str(value).strip().lower()
    if text in ("off", "false", "none", "", "0"):
        return 0.0
    if text.endswith("%"):
        return float(text[:-1]) / 100
    number = re.match(r"^(\d+(?:\.\d+)?)\s*(s|sec|seconds)?$", text)
    return float(number.group(1)) if number else 1.0


def flag_effect(flags: dict[str, str], app: App, component: str, operation: str | None) -> FlagEffect:
    """Combine the effects of every active flag on a component (and operation, when the flag names one)."""
    if not flags:
        return NONE
    out = FlagEffect()
    hit = False
    for name, spec in (app.behaviour.get("flags") or {}).items():
        scale = variant_scale(flags.get(name, "off"))
        if not scale or spec.get("component") != component:
            continue
        if operation is not None and spec.get("operation") and spec["operation"] != operation:
            continue
        hit = True
        out.latency += spec.get("latency", 0.0) * (scale if spec.get("scale_latency") else 1.0)
        out.error_rate = max(out.error_rate, spec.get("error_rate", 0.0) * (scale if scale <= 1 else 1.0))
        out.message = out.message or spec.get("message", "")
        out.unreachable |= set(spec.get("unreachable", []))
        out.cpu += spec.get("cpu", 0.0)
        out.memory_mb += spec.get("memory_mb", 0.0)
        out.flood_rps += spec.get("flood_rps", 0.0)
    return out if hit else NONE


def error_template(app: App, program: str | None, kind: str) -> list:
    """Return [level, source, message] for an error kind as the program would log it."""
    errors = app.behaviour.get("errors") or {}
    for key in (program, "default"):
        if key and key in errors and kind in errors[key]:
            return errors[key][kind]
    return GENERIC_ERRORS[kind]


def render(template: list, fields: dict) -> tuple[str, str, str]:
    """Fill a template's placeholders (missing ones stay empty)."""
    safe = {k: ("" if v is None else v) for k, v in fields.items()}
    fill = lambda text: PLACEHOLDER.sub(lambda m: str(safe.get(m.group(1), "")), str(text))  # noqa: E731
    level, source, message = template
    return level, fill(source), fill(message)


def mongo_access(behaviour, app: App, component: str, reach) -> str:
    """Return why a component cannot use the MongoDB behind reach ("" when it can)."""
    state = behaviour.twin.extensions.mongo
    server = state.server(reach.pod)
    if server is None:
        return "refused"
    if server.tls_mode == "requireTLS":
        return "connection closed by peer: the server requires TLS"
    spec = app.components.get(component, {}).get("mongo") or {}
    if not server.auth:
        return ""
    data = state.data(server.volume)
    user = data.authenticate(spec.get("user", ""), spec.get("password", ""), "admin") if spec.get("user") else None
    if user is None:
        return "server returned error on SASL authentication step: Authentication failed."
    db = spec.get("db", "")
    if not data.can_write(user, db):
        return f"not authorized on {db} to execute command {{ find: \"{db.removesuffix('-db')}\" }}"
    return ""
