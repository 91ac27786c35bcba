"""Load the run configuration: a YAML/TOML file, then environment variables, then explicit overrides (CLI flags).

`load_config()` reads the file given, else the one `AOI_CONFIG` names, else `aoi.yaml` / `aoi.yml` / `aoi.toml` in
the working directory when present; every option is optional. `aoi.example.yaml` documents them all.

Environment variables (empty ones are ignored; each sets one option):

| variable | option |
|---|---|
| AOI_CONFIG | the config file to read |
| AOI_MODEL, AOI_BASE_URL, AOI_API_KEY | model.spec, model.base_url, model.api_key |
| AOI_TEMPERATURE, AOI_MAX_TOKENS, AOI_TIMEOUT | model.temperature, model.max_tokens, model.timeout |
| AOI_MAX_RETRY_WAIT | model.max_retry_wait |
| AOI_OBSERVER_MODEL, AOI_PROBE_MODEL, AOI_EXECUTOR_MODEL, AOI_COMPRESSOR_MODEL | models.<role>.spec |
| AOI_MAX_ITERATIONS, AOI_DECISION_FORMAT | agent.max_iterations, agent.decision_format |
| AOI_APPROVAL | approval.mode |
| AOI_BACKEND, AOI_SEED, AOI_MAX_STEPS, AOI_KUBECONFIG | env.backend, env.seed, env.max_steps, env.kubeconfig |
| AOI_PROMETHEUS_URL, AOI_JAEGER_URL | env.prometheus_url, env.jaeger_url (cluster backend telemetry) |
| AOI_STORE, AOI_AUDIT_LOG | store.path, store.audit_log |
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import yaml
from pydantic import BaseModel, ValidationError

from aoi.config.schema import ROLES, ConfigError, RunConfig

DEFAULT_FILES = ("aoi.yaml", "aoi.yml", "aoi.toml")
CONFIG_ENV = "AOI_CONFIG"
ENV_VARS: dict[str, str] = {
    "AOI_MODEL": "model.spec", "AOI_BASE_URL": "model.base_url", "AOI_API_KEY": "model.api_key",
    "AOI_TEMPERATURE": "model.temperature", "AOI_MAX_TOKENS": "model.max_tokens", "AOI_TIMEOUT": "model.timeout",
    "AOI_MAX_RETRY_WAIT": "model.max_retry_wait",
    **{f"AOI_{role.upper()}_MODEL": f"models.{role}.spec" for role in ROLES},
    "AOI_MAX_ITERATIONS": "agent.max_iterations", "AOI_DECISION_FORMAT": "agent.decision_format",
    "AOI_APPROVAL": "approval.mode",
    "AOI_BACKEND": "env.backend", "AOI_SEED": "env.seed", "AOI_MAX_STEPS": "env.max_steps",
    "AOI_KUBECONFIG": "env.kubeconfig", "AOI_PROMETHEUS_URL": "env.prometheus_url", "AOI_JAEGER_URL": "env.jaeger_url",
    "AOI_STORE": "store.path", "AOI_AUDIT_LOG": "store.audit_log",
}


def load_config(path: str | Path | None = None, overrides: Mapping[str, Any] | None = None,
                environ: Mapping[str, str] | None = None) -> RunConfig:
    """Load the configuration: file, then environment variables, then overrides (later wins).

    Args:
        path: A .yaml/.yml/.toml file; None reads $AOI_CONFIG, else ./aoi.yaml (or .yml/.toml) when present.
        overrides: Options from the command line, nested or dotted ({"env.seed": 3}); None values are skipped.
        environ: The environment to read (default os.environ).

    Example:
        >>> load_config(overrides={"model": "openai:gpt-4o-mini", "env.seed": 3}, environ={}).env.seed
        3
    """
    environ = os.environ if environ is None else environ
    file = _config_file(path, environ)
    layers = [(str(file), _read_file(file)) if file else ("defaults", {}),
              ("environment", _env_layer(environ)), ("overrides", _nest(overrides or {}))]
    merged: dict = {}
    for _, layer in layers:
        merged = _merge(merged, _normalise(layer))
    try:
        return RunConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, layers)) from None


def resolved(config: RunConfig) -> dict:
    """Return the configuration as JSON-ready data, every role's model spelt out and secrets redacted.

    Example:
        >>> resolved(RunConfig(model={"spec": "openai:gpt-4o", "api_key": "sk-1"}))["model"]["api_key"]
        '**********'
    """
    data = config.model_dump(mode="json")
    data["models"] = {role: config.model_for(role).model_dump(mode="json") for role in ROLES}
    for model in [data["model"], *data["models"].values()]:
        model["base_url"] = model["base_url"] and _redact_url(model["base_url"])
    return data


def _redact_url(url: str) -> str:
    """Hide a password written into a URL (https://user:secret@host)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return urlunsplit(parts._replace(netloc=f"{parts.username}:**********@{parts.hostname}"
                                            + (f":{parts.port}" if parts.port else "")))


def _config_file(path: str | Path | None, environ: Mapping[str, str]) -> Path | None:
    """Return the file to read: the one given, $AOI_CONFIG, or the first default file present."""
    given = path or environ.get(CONFIG_ENV) or None
    if given is None:
        return next((Path(name) for name in DEFAULT_FILES if Path(name).is_file()), None)
    if not Path(given).is_file():
        where = "given" if path else f"named by {CONFIG_ENV}"
        raise ConfigError(f"config file {given} ({where}) does not exist; pass an existing file or none at all")
    return Path(given)


def _read_file(path: Path) -> dict:
    """Parse a YAML or TOML config file into a mapping."""
    if path.suffix not in (".yaml", ".yml", ".toml"):
        raise ConfigError(f"config file {path} must end in .yaml, .yml or .toml")
    try:
        text = path.read_text()
        data = tomllib.loads(text) if path.suffix == ".toml" else yaml.safe_load(text)
    except (yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"config file {path} is not valid {path.suffix[1:].upper()}: {exc}") from None
    if not isinstance(data, (dict, type(None))):
        raise ConfigError(f"config file {path} must hold a mapping of options (see aoi.example.yaml)")
    return data or {}


def _env_layer(environ: Mapping[str, str]) -> dict:
    """Return the options set by AOI_* environment variables."""
    return _nest({option: environ.get(name) or None for name, option in ENV_VARS.items()})


def _nest(flat: Mapping[str, Any]) -> dict:
    """Expand dotted keys into nested mappings, dropping None values."""
    nested: dict = {}
    for key, value in flat.items():
        if value is None:
            continue
        *parents, leaf = key.split(".")
        node = nested
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = _nest(value) if isinstance(value, Mapping) else value
    return nested


def _normalise(layer: dict) -> dict:
    """Turn model specs written as bare strings into {spec: ...}, so later layers merge field by field."""
    layer = dict(layer)
    if isinstance(layer.get("model"), str):
        layer["model"] = {"spec": layer["model"]}
    if isinstance(layer.get("models"), Mapping):
        layer["models"] = {r: {"spec": m} if isinstance(m, str) else m for r, m in layer["models"].items()}
    return layer


def _merge(base: dict, top: Mapping) -> dict:
    """Merge `top` over `base`, mapping by mapping."""
    merged = dict(base)
    for key, value in top.items():
        both = isinstance(value, Mapping) and isinstance(merged.get(key), Mapping)
        merged[key] = _merge(merged[key], value) if both else value
    return merged


def _explain(exc: ValidationError, layers: list[tuple[str, dict]]) -> str:
    """Return one line per error: the option, its value and origin, what is wrong."""
    lines = []
    for error in exc.errors():
        loc = [str(part) for part in error["loc"]]
        where = ".".join(loc) or "config"
        hidden = not loc or loc[-1] == "api_key" or isinstance(error.get("input"), Mapping)
        value = "" if hidden else f" = {error.get('input')!r}"
        lines.append(f"  {where}{value} (from {_origin(loc, layers)}): {_message(error, loc)}")
    return "invalid configuration:\n" + "\n".join(lines)


def _message(error: dict, loc: list[str]) -> str:
    """Return pydantic's message, or for an unknown option the known ones and the closest match."""
    if error["type"] != "extra_forbidden":
        return error["msg"].removeprefix("Value error, ")
    known = list(_section_at(loc[:-1]).model_fields)
    close = difflib.get_close_matches(loc[-1], known, n=1)
    return f"unknown option{f' (did you mean {close[0]}?)' if close else ''}; known here: {', '.join(known)}"


def _section_at(loc: list[str]) -> type[BaseModel]:
    """Return the config class at a location, stepping through list indexes and optional sections."""
    section: type[BaseModel] = RunConfig
    for part in (p for p in loc if not p.isdigit()):
        annotation = section.model_fields[part].annotation
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        section = next(a for a in candidates if isinstance(a, type) and issubclass(a, BaseModel))
    return section


def _child(node: Any, part: str) -> Any:
    """Step into a mapping by key or a list by index; None when there is no such child."""
    if isinstance(node, Mapping):
        return node.get(part)
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return node[int(part)]
    return None


def _origin(loc: list[str], layers: list[tuple[str, dict]]) -> str:
    """Name the last layer that set this option (the file, the variable, or overrides)."""
    for name, layer in reversed(layers):
        node: Any = _normalise(layer)
        for part in loc:
            node = _child(node, part)
        if node is not None or (not loc and layer):
            if name == "environment":
                return next((var for var, opt in ENV_VARS.items() if opt.split(".") == loc), "environment")
            return name
    return "defaults"
