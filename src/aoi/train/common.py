"""What SFT and GRPO share: LoRA settings, device and precision arguments, and the JSONL metrics log."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DEVICES = ("cpu", "cuda")
PRECISIONS = ("auto", "fp32", "bf16")


@dataclass(kw_only=True)
class Lora:
    """PEFT LoRA settings (the adapter the commands train)."""

    r: int = 8  # rank of the update matrices
    alpha: int = 16  # scale: the update is multiplied by alpha / r
    dropout: float = 0.0  # no dropout: runs repeat exactly by seed
    target_modules: list[str] = field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])

    def peft(self) -> Any:
        """Return the peft LoraConfig."""
        from peft import LoraConfig

        return LoraConfig(r=self.r, lora_alpha=self.alpha, lora_dropout=self.dropout,
                          target_modules=list(self.target_modules), task_type="CAUSAL_LM")

    def as_dict(self) -> dict:
        """Return the settings for the manifest."""
        return asdict(self)


def resolve_precision(precision: str, device: str, base: str | None) -> str:
    """Return the precision training computes in, "fp32" or "bf16": as asked, or for "auto" bf16 on CUDA and on a
    CPU that computes bf16 natively (AVX512-BF16 or AMX; the tiny test model excepted, so that its runs repeat on
    every machine), fp32 elsewhere. bf16 is autocast: the LoRA weights and the optimizer stay fp32.

    Example:
        >>> resolve_precision("fp32", "cpu", "smollm2"), resolve_precision("auto", "cpu", "tiny")
        ('fp32', 'fp32')
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r} is unknown; use --precision auto, fp32 or bf16")
    if precision != "auto":
        return precision
    if device == "cuda":
        return "bf16"
    from aoi.models.local import cpu_has_bf16

    return "bf16" if base != "tiny" and cpu_has_bf16() else "fp32"


def device_arguments(device: str, precision: str = "fp32") -> dict:
    """Return TrainingArguments fields for a device and a resolved precision (bf16: autocast, on CPU too).

    Example:
        >>> device_arguments("cpu"), device_arguments("cpu", "bf16")["bf16"]
        ({'use_cpu': True, 'bf16': False, 'fp16': False}, True)
    """
    if device not in DEVICES:
        raise ValueError(f"device {device!r} is unknown; use --device cpu or --device cuda")
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise ValueError("--device cuda needs a CUDA GPU and a CUDA build of torch; none is available here, "
                             "use --device cpu")
    return {"use_cpu": device == "cpu", "bf16": precision == "bf16", "fp16": False}


def offline() -> None:
    """Keep every library off the network (models and tokenizers come from disk)."""
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.setdefault(name, "1")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def jsonl_callback(path: str | Path) -> Any:
    """Return a TrainerCallback appending every logged metrics dict (with step and time) to a JSONL file."""
    from transformers import TrainerCallback

    class JsonlLog(TrainerCallback):
        """Append each log to the JSONL file."""

        def on_log(self, args, state, control, logs=None, **kwargs):
            """Write one line per log call."""
            if logs and state.is_world_process_zero:
                append_jsonl(path, {"step": state.global_step, "epoch": state.epoch, "time": time.time(), **logs})

    return JsonlLog()


def tensorboard_callback(folder: str | Path) -> Any:
    """Return a TensorBoard callback writing into `folder` (transformers 5 dropped TrainingArguments.logging_dir)."""
    from torch.utils.tensorboard import SummaryWriter
    from transformers.integrations import TensorBoardCallback

    return TensorBoardCallback(tb_writer=SummaryWriter(log_dir=str(folder)))


def callbacks(out: str | Path) -> list:
    """Return the metric sinks of a run: `metrics.jsonl` and `tensorboard/` inside its folder."""
    return [jsonl_callback(Path(out) / "metrics.jsonl"), tensorboard_callback(Path(out) / "tensorboard")]


def append_jsonl(path: str | Path, line: dict) -> None:
    """Append one JSON line to a log (its folder made first); numpy and torch numbers are written as floats.

    Example:
        >>> import tempfile; p = Path(tempfile.mkdtemp()) / "logs" / "m.jsonl"
        >>> append_jsonl(p, {"step": 1}); append_jsonl(p, {"step": 2})
        >>> [line["step"] for line in read_jsonl(p)]
        [1, 2]
    """
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        handle.write(json.dumps(line, default=float) + "\n")


def read_jsonl(path: str | Path) -> list[dict]:
    """Read a JSONL metrics log.

    Example:
        >>> import tempfile; p = Path(tempfile.mkdtemp()) / "m.jsonl"
        >>> _ = p.write_text('{"step": 1, "loss": 0.5}\\n')
        >>> read_jsonl(p)[0]["loss"]
        0.5
    """
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
