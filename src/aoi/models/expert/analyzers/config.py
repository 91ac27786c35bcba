"""Configuration: MongoDB configs that require TLS, feature flags switched on, mounted maintenance scripts."""

from __future__ import annotations

import copy
import functools
import json
import re

import yaml

from aoi.models.expert import contract
from aoi.models.expert.analyzers import Evidence
from aoi.tasks import NEXT_ACTION

TLS_REQUIRED = ("requireTLS", "requireSSL")
OFF = ("off", "false", "0", "disabled")
MONGO_OPS = ("grantRolesToUser", "createUser", "revokeRolesFromUser", "dropUser", "updateUser")


@functools.lru_cache(maxsize=256)
def _parsed(text: str) -> tuple[bool, object]:
    """Return (parsed, document) of a YAML text, kept: episodes show the same ConfigMaps again and again, and the
    pure-Python parser was a third of the expert's time (callers get copies: see _load)."""
    try:
        return True, yaml.safe_load(text)
    except yaml.YAMLError:
        return False, None


def _load(text: str):
    """Parse YAML like yaml.safe_load (a fresh object every call), raising yaml.YAMLError on bad input."""
    ok, doc = _parsed(text)
    if not ok:
        raise yaml.YAMLError(f"not YAML: {text[:80]!r}")
    return copy.deepcopy(doc)


def configmaps(text: str) -> list[dict]:
    """Return the ConfigMaps in `kubectl get configmap ... -o yaml` output (one object or a List).

    Example:
        >>> [c["metadata"]["name"] for c in configmaps("kind: ConfigMap\\nmetadata: {name: app}\\ndata: {}\\n")]
        ['app']
    """
    lines = [line for line in text.splitlines() if not line.startswith((contract.OUTPUT_CUT, NEXT_ACTION))]
    try:
        doc = _load("\n".join(lines))
    except yaml.YAMLError:
        return []
    if not isinstance(doc, dict):
        return []
    items = doc.get("items") if doc.get("kind") == "List" else [doc]
    return [i for i in items or [] if isinstance(i, dict) and i.get("kind") == "ConfigMap"]


def analyze(text: str) -> list[Evidence]:
    """Find TLS-required database configs, enabled flags and mounted scripts in ConfigMaps' YAML.

    Example:
        >>> t = "kind: ConfigMap\\nmetadata: {name: db}\\ndata:\\n  mongod.conf: 'net: {tls: {mode: requireTLS}}'\\n"
        >>> [(e.kind, e.component, e.facts["fixed"]) for e in analyze(t)]
        [('tls_required', 'db', '{net: {tls: {mode: disabled}}}')]
    """
    found = []
    for cm in configmaps(text):
        name = cm.get("metadata", {}).get("name", "")
        for key, value in (cm.get("data") or {}).items():
            found += _tls(name, key, value) + _flags(name, key, value) + _script(name, key, value)
    return found


def _tls(name: str, key: str, value: str) -> list[Evidence]:
    """Return evidence when a YAML config sets net.tls.mode (or net.ssl.mode) to require TLS."""
    if isinstance(value, str) and not any(word in value for word in ("tls", "ssl", "\\")):
        # YAML spells keys out as they read unless it escapes characters (with a backslash): a value with no "tls",
        # "ssl" or backslash has neither section. Not parsing it spares most of the expert's YAML time (flag files).
        return []
    try:
        conf = _load(value)
    except yaml.YAMLError:
        return []
    net = conf.get("net") if isinstance(conf, dict) else None
    for section in ("tls", "ssl"):
        mode = ((net or {}).get(section) or {}).get("mode") if isinstance(net, dict) else None
        if mode in TLS_REQUIRED:
            fixed = json.loads(json.dumps(conf))
            fixed["net"][section]["mode"] = "disabled"
            flow = yaml.safe_dump(fixed, default_flow_style=True, sort_keys=False).strip()
            return [Evidence("tls_required", name, f"ConfigMap {name} key {key} sets net.{section}.mode: {mode}",
                             {"configmap": name, "key": key, "mode": mode, "fixed": flow})]
    return []


def _flags(name: str, key: str, value: str) -> list[Evidence]:
    """Return one evidence per feature flag whose default variant is on (flagd's JSON format)."""
    try:
        doc = json.loads(value)
    except (TypeError, ValueError):
        return []
    flags = doc.get("flags") if isinstance(doc, dict) else None
    if not isinstance(flags, dict):
        return []
    found = []
    for flag, spec in flags.items():
        variant = str(spec.get("defaultVariant", ""))
        if _on(spec, variant):
            found.append(Evidence("flag_enabled", flag, f"feature flag {flag} is on (defaultVariant {variant!r}) in "
                                  f"ConfigMap {name}: {spec.get('description', '')}",
                                  {"configmap": name, "key": key, "flag": flag, "variant": variant,
                                   "description": spec.get("description", ""), "fixed": _off(doc, flag)}))
    return found


def _on(spec: dict, variant: str) -> bool:
    """Return whether a flag's default variant turns its behaviour on."""
    if spec.get("state", "ENABLED") != "ENABLED" or variant.lower() in OFF:
        return False
    value = (spec.get("variants") or {}).get(variant, True)
    return value not in (False, 0, None, "", "off")


def _off(doc: dict, flag: str) -> str:
    """Return the flag file with one flag's defaultVariant set back to its off variant, as compact JSON."""
    fixed = json.loads(json.dumps(doc))
    variants = fixed["flags"][flag].get("variants") or {}
    fixed["flags"][flag]["defaultVariant"] = next((v for v in variants if v.lower() in OFF), "off")
    return json.dumps(fixed, separators=(",", ":"))


def _script(name: str, key: str, value: str) -> list[Evidence]:
    """Return a mounted shell script as a fact, with the database operations it runs and its variables."""
    if not key.endswith(".sh") or not isinstance(value, str):
        return []
    ops = [op for op in MONGO_OPS if op + "(" in value]
    variables = dict(re.findall(r'^\s*([A-Z_]+)="?([^"\n]*)"?\s*$', value, re.MULTILINE))
    authenticated = bool(re.search(r"mongo\S*\s.*-u\s", value))
    return [Evidence("script", name, f"ConfigMap {name} holds script {key} ({', '.join(ops) or 'no database ops'})",
                     {"configmap": name, "key": key, "ops": ops, "variables": variables,
                      "authenticated": authenticated})]


def mounts(describe: str) -> dict[str, str]:
    """Return {ConfigMap name: mount path} from `kubectl describe deployment|pod` output.

    Example:
        >>> t = ("    Mounts:\\n      /scripts from ops (rw)\\n  Volumes:\\n   ops:\\n"
        ...      "    Type:  ConfigMap (a volume populated by a ConfigMap)\\n    Name:  db-ops\\n")
        >>> mounts(t)
        {'db-ops': '/scripts'}
    """
    paths = {vol: path for path, vol in re.findall(r"^\s+(/\S*) from (\S+) \(", describe, re.MULTILINE)}
    found = {}
    for vol, body in re.findall(r"^\s{2,}(\S+):\n((?:\s{4,}.*\n?)+)", describe, re.MULTILINE):
        match = re.search(r"Type:\s+ConfigMap.*\n\s+Name:\s+(\S+)", body)
        if match and vol in paths:
            found[match.group(1)] = paths[vol]
    return found
