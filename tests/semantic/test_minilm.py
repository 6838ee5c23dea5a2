"""The reranker's encoder: all-MiniLM-L6-v2 in numpy, against published numbers and the
reference implementation, and on bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import FIXTURES
from toolfind.semantic import minilm


@pytest.fixture(scope="module")
def encoder(installed_model: Path) -> minilm.Encoder:
    return minilm.Encoder(installed_model / "all-minilm-l6-v2")


def _similarities(encoder: minilm.Encoder, sentences: list[str]) -> list[list[float]]:
    vectors = encoder.embed(sentences)
    return (vectors @ vectors.T).tolist()  # type: ignore[no-any-return]


def test_similarities_match_the_ones_sentence_transformers_publishes(
    encoder: minilm.Encoder,
) -> None:
    # sbert.net, "Usage" (docs/sentence_transformer/usage/usage.html), all-MiniLM-L6-v2:
    # tensor([[1.0000, 0.6660, 0.1046], [0.6660, 1.0000, 0.1411], [0.1046, 0.1411, 1.0000]])
    sims = _similarities(
        encoder,
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."],
    )
    assert sims[0][1] == pytest.approx(0.6660, abs=5e-5)
    assert sims[0][2] == pytest.approx(0.1046, abs=5e-5)
    assert sims[1][2] == pytest.approx(0.1411, abs=5e-5)


def test_vector_of_the_model_cards_sentence_matches_the_published_one(
    encoder: minilm.Encoder,
) -> None:
    # The model card's example sentence; sentence-transformers prints its vector as
    # [6.76569194e-02, 6.34959713e-02, 4.87131141e-02, 7.93049783e-02, ...].
    vector = encoder.embed_one("This is an example sentence")
    assert vector.shape == (384,)
    assert vector[:4].tolist() == pytest.approx(
        [0.0676569, 0.0634960, 0.0487131, 0.0793050], abs=2e-6
    )


def test_vectors_match_the_reference_implementation(encoder: minilm.Encoder) -> None:
    reference = json.loads((FIXTURES / "minilm" / "reference.json").read_text(encoding="utf-8"))
    ours = encoder.embed(reference["sentences"])
    theirs = np.array(reference["vectors"], dtype=np.float32)
    assert np.abs(ours - theirs).max() < 1e-5
    assert (np.einsum("ij,ij->i", ours, theirs) > 0.99999).all()


def test_a_batch_gives_each_text_the_vector_it_gets_alone(encoder: minilm.Encoder) -> None:
    texts = ["short", "a somewhat longer sentence about files and folders", "", "x " * 300]
    together = encoder.embed(texts)
    for text, vector in zip(texts, together, strict=True):
        assert np.abs(encoder.embed_one(text) - vector).max() < 1e-5


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "😀🎉🚀",
        "日本語のテキストを検索する",
        "Größe ändern",
        "\ud800 lone",
        "\x00\x1b[31m",
    ],
)
def test_bad_input_gets_a_unit_vector(encoder: minilm.Encoder, text: str) -> None:
    vector = encoder.embed_one(text)
    assert np.isfinite(vector).all()
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-5)


def test_a_megabyte_query_is_clipped_to_256_word_pieces(encoder: minilm.Encoder) -> None:
    text = "compress the file " * 60_000  # about 1 MB
    assert len(encoder.token_ids([text])[0]) == minilm.MAX_TOKENS
    # What lies past the 256th word piece does not change the vector.
    assert np.abs(encoder.embed_one(text) - encoder.embed_one(text[:5000])).max() < 1e-6


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-30, max_value=30, allow_nan=False, width=32))
def test_gelu_is_the_erf_form(x: float) -> None:
    got = float(minilm._gelu(np, np.array([x], dtype=np.float32))[0])
    want = 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))
    assert got == pytest.approx(want, abs=2e-6, rel=1e-5)
