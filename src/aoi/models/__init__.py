"""Model backends behind one protocol: OpenAI-compatible endpoints, local transformers (+LoRA), expert, replay."""

from aoi.models.base import Completion, Message, Model, ModelError, TransientModelError
from aoi.models.registry import FORMS, load_model
from aoi.models.replay import ReplayExhausted, ReplayModel, ReplayUnused
from aoi.models.retry import with_retries

__all__ = ["Completion", "FORMS", "Message", "Model", "ModelError", "ReplayExhausted", "ReplayModel", "ReplayUnused",
           "TransientModelError", "load_model", "with_retries"]
