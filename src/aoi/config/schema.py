"""The configuration's schema: pydantic models, every option documented where it is declared."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from aoi.protocols import MODEL_ROLES as ROLES  # the roles a config gives a model (models.<role>)


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the option, where it came from and how to fix it."""


class _Section(BaseModel):
    """A config section: unknown options are errors (typos surface), assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ModelConfig(_Section):
    """Which model answers and how it is called; a bare string in a file means `{spec: ...}`."""

    spec: str = Field("expert", description="Model spec: expert, openai:<model>, openrouter:<model>, "
                      "vllm:<model>@<url>, ollama:<model>, local:<path-or-smollm2>[+adapter=<dir>] or replay:<file>.")
    base_url: str | None = Field(None, description="An OpenAI-compatible server's /v1 URL (None: the spec's own).")
    api_key: SecretStr | None = Field(None, description="API key for base_url; never written out (resolved() "
                                      "shows **********).")
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="Sampling temperature (0 = greedy).")
    max_tokens: int = Field(1024, ge=1, description="Most tokens one answer may generate.")
    timeout: float | None = Field(None, gt=0, description="Seconds one request may take in all (connecting, "
                                  "waiting, reading the whole body) before it counts as a (retried) timeout (None: "
                                  "the backend's own, 60 s for an endpoint, 600 s for a local model on vLLM).")
    max_retry_wait: float = Field(60.0, ge=0, description="Longest Retry-After (seconds) a rate-limited or busy "
                                  "server is waited for before a retry; one asking for more fails the call at once, "
                                  "saying so, instead of holding the run (0: never wait on Retry-After).")

    @model_validator(mode="before")
    @classmethod
    def _from_spec(cls, data: Any) -> Any:
        return {"spec": data} if isinstance(data, str) else data

    @field_validator("spec")
    @classmethod
    def _known_kind(cls, spec: str) -> str:
        from aoi.models.registry import FORMS

        kinds = {form.split(":")[0] for form in FORMS}
        kind, _, rest = spec.partition(":")
        if kind not in kinds:
            raise ValueError(f"unknown model kind {kind!r}; use one of {', '.join(FORMS)} (a bare model name "
                             f"needs its provider, e.g. openai:{spec})")
        if (kind == "expert") != (rest == ""):
            raise ValueError("write just 'expert'" if kind == "expert" else f"{kind} needs a model: {kind}:<name>")
        return spec

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        if url is not None and not url.startswith(("http://", "https://")):
            raise ValueError("base_url must start with http:// or https://, e.g. http://127.0.0.1:8000/v1")
        return url


class GuidanceConfig(_Section):
    """Guidance mined from failed runs (`aoi evolve guidance`) that the Observer is shown."""

    file: Path = Field(..., description="Guidance JSONL written by `aoi evolve guidance --out FILE`.")
    sha256: str | None = Field(None, description="The file's sha256, filled in when the config is loaded (a run's "
                               "config.json records it; a resume with a changed file is refused).")
    top_k: int = Field(3, ge=1, description="Most entries shown in one Observer prompt.")
    budget_tokens: int = Field(300, ge=20, description="Tokens (cl100k) the shown entries may take together.")

    @model_validator(mode="before")
    @classmethod
    def _hash_file(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("file") is None:
            return data
        path = Path(data["file"])
        if not path.is_file():
            raise ValueError(f"guidance file {path} does not exist; write one with `aoi evolve guidance --from "
                             f"RUN_DIR --out {path}` or drop --guidance")
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if data.get("sha256") not in (None, digest):
            raise ValueError(f"guidance file {path} changed since sha256 {data['sha256'][:12]}... was recorded; "
                             "restore it or start a new run (another --out)")
        return {**data, "sha256": digest}


class AgentConfig(_Section):
    """Budgets and guards of the agent loop."""

    max_iterations: int = Field(14, ge=1, description="Observer decisions per episode before it must submit.")
    probe_budget: int = Field(4, ge=1, description="Environment actions the Probe may take per instruction.")
    executor_budget: int = Field(4, ge=1, description="Environment actions the Executor may take per instruction.")
    compress_budget_tokens: int = Field(1500, ge=50, description="Tokens the Compressor condenses an output to.")
    observer_context_tokens: int = Field(4000, ge=1500, description="Tokens (cl100k) the Observer's whole prompt "
                                         "may take: system, task, plan, decisions and findings; the oldest "
                                         "findings are condensed, then dropped, to fit (the prompt says so).")
    repeat_limit: int = Field(2, ge=1, description="How often one sub-agent call may run the same action before the "
                                                   "guard refuses it.")
    output_cap_chars: int = Field(12000, ge=200, description="Raw output characters kept before compression.")
    decision_format: Literal["auto", "standard", "compact"] = Field(
        "auto", description="The Observer's decision format: standard (phase, plan, hypotheses, next, instruction, "
        "context, answer), compact (next, instruction or an answer chosen from the prompt's answer choices: for "
        "small models) or auto (compact for local: models, standard otherwise).")
    guidance: GuidanceConfig | None = Field(None, description="Guidance entries retrieved into the Observer's "
                                            "prompt ({file, top_k, budget_tokens}; None: no guidance, the prompt "
                                            "is unchanged).")

    @model_validator(mode="after")
    def _compressed_fits(self) -> AgentConfig:
        if self.compress_budget_tokens >= self.observer_context_tokens:
            raise ValueError(f"compress_budget_tokens ({self.compress_budget_tokens}) must be below "
                             f"observer_context_tokens ({self.observer_context_tokens}); lower the first or raise "
                             f"the second")
        return self


class ApprovalConfig(_Section):
    """How the Executor's changes are approved."""

    mode: Literal["auto", "ask", "deny"] = Field("auto", description="For commands no rule decides: auto approves, "
                                                 "ask prompts on the terminal, deny refuses every change.")
    rules: list[dict] | None = Field(None, description="Rules checked in order before the mode (first match wins), "
                                     "e.g. {deny: {verbs: [delete], resources: [pv]}, reason: no PV deletes}; "
                                     "None uses the safe defaults of aoi.safety.approval.DEFAULT_RULES.")

    @field_validator("rules")
    @classmethod
    def _parses(cls, rules: list[dict] | None) -> list[dict] | None:
        from aoi.safety.approval import RuleError, parse_rules

        try:
            parse_rules(rules)
        except RuleError as exc:
            raise ValueError(str(exc)) from None
        return rules


class EnvConfig(_Section):
    """Where episodes run."""

    backend: Literal["twin", "aiopslab", "cluster"] = Field("twin", description="twin (the embedded digital "
                                                            "twin), aiopslab (AIOpsLab itself) or cluster (a real "
                                                            "one).")
    seed: int = Field(0, ge=0, description="Seed of the twin and of sampling: same seed, same observations.")
    max_steps: int = Field(30, ge=1, description="Environment actions per episode before it is truncated.")
    target: str | None = Field(None, description="Faulted component of a parametric problem (None: the default).")
    kubeconfig: Path | None = Field(None, description="Kubeconfig of the cluster; required when backend is cluster.")
    prometheus_url: str | None = Field(None, description="Prometheus HTTP address get_metrics reads on a cluster "
                                       "backend, e.g. http://localhost:32000 (None: get_metrics says so).")
    jaeger_url: str | None = Field(None, description="Jaeger query HTTP address get_traces reads on a cluster "
                                   "backend, e.g. http://localhost:16686 (None: get_traces says so).")
    scenarios: list[Path] | None = Field(None, description="Scenario files (JSON Lines, docs/scenarios.md) whose "
                                         "problems scenario:<id>-<task> ids name; `aoi eval --problems "
                                         "scenarios:FILE` sets it so workers and resumes rebuild them.")

    @model_validator(mode="after")
    def _cluster_needs_kubeconfig(self) -> EnvConfig:
        if self.backend == "cluster" and self.kubeconfig is None:
            raise ValueError("backend 'cluster' needs env.kubeconfig (or AOI_KUBECONFIG) naming a kubeconfig file")
        return self


class StoreConfig(_Section):
    """Where runs are recorded."""

    path: Path = Field(Path("runs/trajectories.db"), description="SQLite trajectory store (created when missing).")
    audit_log: Path = Field(Path("runs/audit.jsonl"), description="Append-only log of every change the Executor "
                            "made or was refused.")


class RoleModels(_Section):
    """Per-role model overrides; an unset role uses the main model, a set one changes only what it names."""

    observer: ModelConfig | None = Field(None, description="Model of the Observer (plans, decides, submits).")
    probe: ModelConfig | None = Field(None, description="Model of the Probe (read-only investigation).")
    executor: ModelConfig | None = Field(None, description="Model of the Executor (changes under approval).")
    compressor: ModelConfig | None = Field(None, description="Model of the Compressor (condenses outputs).")


class RunConfig(_Section):
    """Everything one `aoi run` or `aoi eval` needs."""

    model: ModelConfig = Field(default_factory=ModelConfig, description="The main model, for every role.")
    models: RoleModels = Field(default_factory=RoleModels, description="Per-role overrides of the main model.")
    agent: AgentConfig = Field(default_factory=AgentConfig, description="Agent loop budgets and guards.")
    approval: ApprovalConfig = Field(default_factory=ApprovalConfig, description="The Executor's approval gate.")
    env: EnvConfig = Field(default_factory=EnvConfig, description="The environment backend and episode limits.")
    store: StoreConfig = Field(default_factory=StoreConfig, description="Trajectory store and audit log.")

    def role_specs(self) -> dict[str, str]:
        """Return each role's model spec (a role without an override has the main model)."""
        return {role: self.model_for(role).spec for role in ROLES}

    def model_for(self, role: str) -> ModelConfig:
        """Return a role's model: the main one with the role's overrides on top.

        The endpoint (base_url, api_key) is inherited only while the role keeps the main model's kind and sets no
        base_url of its own, so a key is never sent to a server it was not given for.

        Example:
            >>> RunConfig(model="openai:gpt-4o", models={"probe": {"temperature": 0.5}}).model_for("probe").spec
            'openai:gpt-4o'
        """
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; use one of {', '.join(ROLES)}")
        override = getattr(self.models, role)
        if override is None:
            return self.model
        given = override.model_fields_set
        data = self.model.model_dump()
        if "base_url" in given or ("spec" in given and _kind(override.spec) != _kind(self.model.spec)):
            data.update(base_url=None, api_key=None)
        return ModelConfig.model_validate(data | override.model_dump(include=given))

    def call_settings(self, role: str) -> dict:
        """Return the max_tokens and temperature the configuration sets for a role (the main model's, then the
        role's own); options left at their defaults are not returned, so a model built elsewhere keeps its own.

        Example:
            >>> RunConfig(model={"temperature": 0.3}, models={"compressor": {"max_tokens": 200}}).call_settings(
            ...     "compressor")
            {'max_tokens': 200, 'temperature': 0.3}
        """
        override = getattr(self.models, role) if role in ROLES else None
        given = self.model.model_fields_set | (override.model_fields_set if override else set())
        chosen = self.model_for(role)
        return {name: getattr(chosen, name) for name in ("max_tokens", "temperature") if name in given}


def _kind(spec: str) -> str:
    """Return the kind of a model spec (the part before the first colon)."""
    return spec.partition(":")[0]


def models_line(specs: dict[str, str]) -> str:
    """Return the model of every role in a few words: one spec when all roles share it, else roles per spec.

    Example:
        >>> models_line({"observer": "expert", "probe": "expert"})
        'expert'
        >>> models_line({"observer": "openai:gpt-4o", "probe": "expert", "executor": "expert"})
        'observer openai:gpt-4o; probe, executor expert'
    """
    by_spec: dict[str, list[str]] = {}
    for role, spec in specs.items():
        by_spec.setdefault(spec, []).append(role)
    if len(by_spec) == 1:
        return next(iter(by_spec))
    return "; ".join(f"{', '.join(roles)} {spec}" for spec, roles in by_spec.items())
