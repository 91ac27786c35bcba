"""The transformers engine's dtype: bf16 where the CPU computes it natively, fp32 for tiny and on request."""

from __future__ import annotations

import pytest

from aoi.models.base import ModelError
from aoi.models.local import _dtype, cpu_has_bf16
from aoi.models.registry import load_model


def test_auto_is_bf16_on_a_native_bf16_cpu_except_for_tiny():
    assert _dtype("auto", "smollm2", "cpu") == ("bfloat16" if cpu_has_bf16() else "float32")
    assert _dtype("auto", "tiny", "cpu") == "float32"  # the tests' model keeps its fp32 figures
    assert _dtype("auto", "tiny", "cuda") == "bfloat16"
    assert _dtype("fp32", "smollm2", "cpu") == "float32" and _dtype("bf16", "tiny", "cpu") == "bfloat16"
    with pytest.raises(ModelError, match="unknown dtype 'fp64'; use fp32, bf16 or auto"):
        _dtype("fp64", "tiny", "cpu")


def test_the_spec_asks_for_fp32_and_refuses_other_dtypes():
    pytest.importorskip("torch", reason="needs the `local` extra (torch)")
    model = load_model("local:tiny+dtype=bf16")
    assert next(model.model.parameters()).dtype.is_floating_point and str(next(model.model.parameters()).dtype) == \
        "torch.bfloat16"
    with pytest.raises(ValueError, match="unknown part 'dtype=fp64'"):
        load_model("local:tiny+dtype=fp64")
