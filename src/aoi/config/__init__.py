"""Typed run configuration: `load_config()` (file < environment < overrides) and `resolved()` (secrets redacted)."""

from aoi.config.load import CONFIG_ENV, DEFAULT_FILES, ENV_VARS, load_config, resolved
from aoi.config.schema import (
    ROLES,
    AgentConfig,
    ApprovalConfig,
    ConfigError,
    EnvConfig,
    GuidanceConfig,
    ModelConfig,
    RoleModels,
    RunConfig,
    StoreConfig,
)

__all__ = ["CONFIG_ENV", "DEFAULT_FILES", "ENV_VARS", "ROLES", "AgentConfig", "ApprovalConfig",
           "ConfigError", "EnvConfig", "GuidanceConfig", "ModelConfig", "RoleModels", "RunConfig", "StoreConfig",
           "load_config", "resolved"]
