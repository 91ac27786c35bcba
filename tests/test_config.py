"""Typed configuration: file < environment < overrides, error messages, per-role models, redaction, the example file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from aoi.config import ConfigError, RunConfig, load_config, resolved, schema

EXAMPLE = Path(__file__).resolve().parents[1] / "aoi.example.yaml"


@pytest.fixture(autouse=True)
def clean_cwd(tmp_path, monkeypatch):
    """Run each test in an empty folder (no aoi.yaml) with no AOI_* variables."""
    monkeypatch.chdir(tmp_path)
    for name in [n for n in os.environ if n.startswith("AOI_")]:
        monkeypatch.delenv(name)


def write(path: str, text: str) -> Path:
    Path(path).write_text(text)
    return Path(path)


def test_defaults_without_any_source():
    config = load_config(environ={})
    assert (config.model.spec, config.env.backend, config.env.max_steps) == ("expert", "twin", 30)
    assert (config.agent.max_iterations, config.agent.probe_budget) == (14, 4)
    assert (config.agent.compress_budget_tokens, config.agent.observer_context_tokens) == (1500, 4000)
    assert config.store.path == Path("runs/trajectories.db") and config.store.audit_log == Path("runs/audit.jsonl")


def test_an_unset_timeout_leaves_each_backend_its_own():
    import inspect

    from aoi.agents.runtime import _options
    from aoi.models.registry import load_model
    from aoi.models.vllm_model import VllmModel

    config = load_config(environ={})
    assert config.model.timeout is None and "timeout" not in _options(config.model)
    endpoint = "vllm:m@http://127.0.0.1:9"  # nothing is sent while the model is built
    assert load_model(endpoint, **_options(config.model)).inner.timeout == 60.0  # an endpoint's own
    chosen = load_config(overrides={"model": {"timeout": 7}}, environ={})
    assert load_model(endpoint, **_options(chosen.model)).inner.timeout == 7
    assert inspect.signature(VllmModel).parameters["timeout"].default == 600.0  # a local model on vLLM: its own


def test_precedence_file_then_environment_then_overrides():
    write("aoi.yaml", "env: {seed: 1, max_steps: 10}\nmodel: {spec: 'openai:a', base_url: 'http://h:1/v1'}\n")
    environ = {"AOI_SEED": "2", "AOI_MODEL": "openai:b", "AOI_MAX_STEPS": ""}
    config = load_config(environ=environ)
    assert (config.env.seed, config.env.max_steps) == (2, 10)  # an empty variable is ignored
    assert (config.model.spec, config.model.base_url) == ("openai:b", "http://h:1/v1")  # merged field by field
    config = load_config(environ=environ, overrides={"env.seed": 3, "env.max_steps": None, "model": "openai:c"})
    assert (config.env.seed, config.env.max_steps, config.model.spec) == (3, 10, "openai:c")


def test_process_environment_is_read_by_default(monkeypatch):
    monkeypatch.setenv("AOI_APPROVAL", "deny")
    monkeypatch.setenv("AOI_STORE", "elsewhere/t.db")
    config = load_config()
    assert config.approval.mode == "deny" and config.store.path == Path("elsewhere/t.db")


def test_file_discovery_toml_and_aoi_config(tmp_path):
    write("other.toml", "[env]\nseed = 7\n[agent]\nmax_iterations = 5\n")
    assert load_config("other.toml", environ={}).env.seed == 7
    assert load_config(environ={"AOI_CONFIG": "other.toml"}).agent.max_iterations == 5
    write("aoi.yml", "env:\n  seed: 9\n")
    assert load_config(environ={}).env.seed == 9


def test_missing_or_unreadable_files_say_what_to_do():
    with pytest.raises(ConfigError, match=r"nope.yaml \(given\) does not exist"):
        load_config("nope.yaml", environ={})
    with pytest.raises(ConfigError, match="named by AOI_CONFIG"):
        load_config(environ={"AOI_CONFIG": "nope.yaml"})
    with pytest.raises(ConfigError, match=r"must end in \.yaml, \.yml or \.toml"):
        load_config(write("aoi.json", "{}"), environ={})
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write("bad.yaml", "env: [unclosed\n"), environ={})
    with pytest.raises(ConfigError, match="must hold a mapping"):
        load_config(write("list.yaml", "- 1\n"), environ={})


def test_errors_name_option_value_origin_and_fix():
    write("aoi.yaml", "agent:\n  max_iteration: 3\nenv:\n  max_steps: 0\n")
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"AOI_SEED": "many"}, overrides={"model": "gpt-4o"})
    message = str(caught.value)
    assert "agent.max_iteration = 3 (from aoi.yaml): unknown option (did you mean max_iterations?)" in message
    assert "env.max_steps = 0 (from aoi.yaml): Input should be greater than or equal to 1" in message
    assert "env.seed = 'many' (from AOI_SEED): Input should be a valid integer" in message
    assert "model.spec = 'gpt-4o' (from overrides)" in message and "e.g. openai:gpt-4o" in message


@pytest.mark.parametrize("overrides, expected", [
    ({"approval.mode": "maybe"}, "approval.mode = 'maybe' (from overrides): Input should be 'auto', 'ask' or 'deny'"),
    ({"approval.rules": [{"refuse": {"verbs": ["delete"]}}]}, "needs exactly one of 'allow' or 'deny'"),
    ({"env.backend": "cluster"}, "needs env.kubeconfig (or AOI_KUBECONFIG)"),
    ({"agent.compress_budget_tokens": 7000}, "must be below observer_context_tokens (4000)"),
    ({"model.base_url": "localhost:8000"}, "must start with http:// or https://"),
    ({"models.probe.tempo": 1}, "models.probe.tempo = 1 (from overrides): unknown option"),
    ({"model": "expert:x"}, "write just 'expert'"),
])
def test_validation_messages(overrides, expected):
    with pytest.raises(ConfigError) as caught:
        load_config(environ={}, overrides=overrides)
    assert expected in str(caught.value)


def test_secrets_are_redacted_everywhere():
    config = load_config(environ={"AOI_API_KEY": "sk-secret", "AOI_MODEL": "openai:gpt-4o-mini",
                                  "AOI_BASE_URL": "https://me:pw123@proxy.example:8443/v1"})
    assert config.model.api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(config) + str(config)
    assert "sk-secret" not in json.dumps(resolved(config)) and "pw123" not in json.dumps(resolved(config))
    assert resolved(config)["model"]["api_key"] == "**********"
    assert resolved(config)["model"]["base_url"] == "https://me:**********@proxy.example:8443/v1"
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"AOI_API_KEY": "sk-secret"}, overrides={"model.api_key": ["sk-secret"]})
    assert "sk-secret" not in str(caught.value)


def test_role_models_default_to_the_main_model_and_inherit_carefully():
    config = load_config(environ={"AOI_API_KEY": "k", "AOI_PROBE_MODEL": "openai:gpt-4o-mini"}, overrides={
        "model": "openai:gpt-4o", "models.compressor": "local:smollm2",
        "models.observer": {"temperature": 0.7}, "models.executor": {"base_url": "http://other/v1"}})
    assert config.model_for("observer").spec == "openai:gpt-4o" and config.model_for("observer").temperature == 0.7
    assert config.model_for("probe").api_key.get_secret_value() == "k"  # same kind: same endpoint
    assert config.model_for("compressor").api_key is None  # another kind: the key stays behind
    assert config.model_for("executor").api_key is None  # another server: the key stays behind
    assert resolved(config)["models"]["probe"]["spec"] == "openai:gpt-4o-mini"
    assert load_config(environ={}).model_for("executor") == load_config(environ={}).model
    with pytest.raises(ValueError, match="unknown role 'judge'"):
        config.model_for("judge")


def test_resolved_is_json_ready():
    data = resolved(load_config(environ={}, overrides={"env.kubeconfig": "k.yaml", "env.backend": "cluster"}))
    assert json.loads(json.dumps(data)) == data and data["env"]["kubeconfig"] == "k.yaml"
    assert set(data["models"]) == {"observer", "probe", "executor", "compressor"}


def _options(model: type[BaseModel], prefix: str = ""):
    """Yield the dotted name of every option, entering sections (fields typed as a config class) depth first."""
    for name, info in model.model_fields.items():
        yield prefix + name
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            yield from _options(info.annotation, prefix + name + ".")


def test_every_option_is_documented_where_declared():
    classes = [c for c in vars(schema).values() if isinstance(c, type) and issubclass(c, BaseModel) and c.__module__
               == schema.__name__]
    assert len(classes) >= 8
    for cls in classes:
        for name, info in cls.model_fields.items():
            assert info.description, f"{cls.__name__}.{name} has no description"


def test_every_option_is_in_the_example_file():
    example = yaml.safe_load(EXAMPLE.read_text())
    for dotted in _options(RunConfig):
        node = example
        for part in dotted.split("."):
            assert isinstance(node, dict) and part in node, f"aoi.example.yaml lacks {dotted}"
            node = node[part]
    assert set(example["approval"]["rules"][0]) <= {"allow", "deny", "reason"}


def test_the_example_file_loads():
    config = load_config(EXAMPLE, environ={})
    assert "deny" in config.approval.rules[0] and config.model.spec == "expert"
