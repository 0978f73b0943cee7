"""Tests for persona_memory.embedding: vectors, the hashing embedder, WordLlama offline."""

from __future__ import annotations

import functools
import logging
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import requests
import tokenizers
import trio
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from persona_memory.embedding import (
    Embedder,
    HashingEmbedder,
    WordLlamaEmbedder,
    cosine_to,
    dequantize,
    quantize,
    unit_rows,
)
from persona_memory.embedding import wordllama as wordllama_module
from persona_memory.errors import EmbedderUnavailable, InvalidInput

DAN_FLAT = "Dan owns a flat in Xuhui"
DAN_QUESTION = "Where does Dan live?"
NOLAN = "Nolan's film opened in July"


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return float(a64 @ b64 / (np.linalg.norm(a64) * np.linalg.norm(b64)))


def _assert_unit_rows(rows: np.ndarray, n: int, dim: int) -> None:
    assert rows.dtype == np.float32
    assert rows.shape == (n, dim)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)


# vectors ---------------------------------------------------------------------------------

vectors_1d = hnp.arrays(
    np.float32,
    st.integers(1, 512),
    elements=st.floats(-1e3, 1e3, width=32, allow_subnormal=False),
).filter(lambda v: np.any(v != 0))


@given(vectors_1d)
def test_quantize_round_trip_keeps_direction(vec: np.ndarray) -> None:
    blob, scale = quantize(vec)
    assert len(blob) == vec.size
    assert scale == pytest.approx(np.max(np.abs(vec)) / 127)
    back = dequantize(blob, scale)
    assert back.dtype == np.float32
    assert back.shape == vec.shape
    assert _cos(back, vec) > 0.99
    assert np.max(np.abs(back - vec)) <= scale / 2 * 1.001


def test_quantize_zero_vector() -> None:
    blob, scale = quantize(np.zeros(8, dtype=np.float32))
    assert (blob, scale) == (bytes(8), 0.0)
    back = dequantize(blob, scale)
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, np.zeros(8))


def test_quantize_uses_full_int8_range() -> None:
    blob, scale = quantize([0.5, -1.0, 0.25, 0.0])
    assert scale == pytest.approx(1.0 / 127)
    assert list(np.frombuffer(blob, dtype=np.int8)) == [64, -127, 32, 0]


@pytest.mark.parametrize("bad", [np.ones((2, 2)), [1.0, float("nan")], [float("inf")]])
def test_quantize_rejects_bad_vectors(bad: object) -> None:
    with pytest.raises(InvalidInput):
        quantize(bad)  # type: ignore[arg-type]


def test_unit_rows_normalises_and_keeps_zero_rows() -> None:
    m = np.array([[3.0, 4.0], [0.0, 0.0], [0.0, -2.0]])
    out = unit_rows(m)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0], [0.0, -1.0]], atol=1e-7)
    np.testing.assert_array_equal(m[0], [3.0, 4.0])
    assert unit_rows(np.zeros((0, 5))).shape == (0, 5)


def test_cosine_to() -> None:
    rows = unit_rows([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0], [-2.0, 0.0]])
    scores = cosine_to(rows, np.array([1.0, 0.0], dtype=np.float32))
    assert scores.dtype == np.float32
    np.testing.assert_allclose(scores, [1.0, np.sqrt(0.5), 0.0, -1.0], atol=1e-6)
    np.testing.assert_array_equal(cosine_to(rows, np.zeros(2)), np.zeros(4))
    with pytest.raises(InvalidInput):
        cosine_to(rows, np.ones(3))


# hashing ---------------------------------------------------------------------------------


async def test_hashing_embedder_contract() -> None:
    embedder: Embedder = HashingEmbedder()
    assert (embedder.name, embedder.dim) == ("hashing-64", 64)
    rows = await embedder.embed([DAN_FLAT, DAN_QUESTION, NOLAN])
    _assert_unit_rows(rows, 3, 64)
    empty = await embedder.embed([])
    assert empty.shape == (0, 64) and empty.dtype == np.float32
    blank = await embedder.embed(["", "!?"])
    np.testing.assert_array_equal(blank, np.zeros((2, 64)))
    await embedder.aclose()


async def test_hashing_embedder_is_deterministic_and_case_insensitive() -> None:
    a = await HashingEmbedder(dim=128).embed([DAN_FLAT])
    b = await HashingEmbedder(dim=128).embed([DAN_FLAT.upper()])
    np.testing.assert_array_equal(a, b)
    assert HashingEmbedder(dim=128).name == "hashing-128"


def test_hashing_embedder_known_vector() -> None:
    # Pins the hash: if this changes, every stored "hashing-*" vector silently goes stale.
    rows = HashingEmbedder(dim=16).embed_sync(["hello world", "Hello!"])
    expected = np.zeros((2, 16), dtype=np.float32)
    expected[0, 3], expected[0, 12] = np.sqrt(0.5), -np.sqrt(0.5)
    expected[1, 3] = 1.0
    np.testing.assert_allclose(rows, expected, atol=1e-6)


async def test_hashing_related_beats_unrelated() -> None:
    rows = await HashingEmbedder(dim=256).embed(
        ["Dan owns a flat in Xuhui", "Dan sold the flat", "Nolan's film opened in July"]
    )
    related, unrelated = float(rows[0] @ rows[1]), float(rows[0] @ rows[2])
    assert related > 0.3
    assert abs(unrelated) < 0.2
    assert related > unrelated


@pytest.mark.parametrize("dim", [0, -1, 2.5, True])
def test_hashing_embedder_rejects_bad_dim(dim: object) -> None:
    with pytest.raises(InvalidInput):
        HashingEmbedder(dim=dim)  # type: ignore[arg-type]


async def test_embed_rejects_bare_string_and_non_strings() -> None:
    with pytest.raises(InvalidInput, match="not a str"):
        await HashingEmbedder().embed("hello")
    with pytest.raises(InvalidInput, match=r"texts\[1\]"):
        await HashingEmbedder().embed(["hello", 3])  # type: ignore[list-item]


# wordllama -------------------------------------------------------------------------------


class NetworkAttempt(AssertionError):
    pass


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Make every way out to the network raise, and record each attempt."""
    attempts: list[str] = []

    def refuse(what: str) -> Callable[..., None]:
        def _refuse(*args: object, **kwargs: object) -> None:
            attempts.append(what)
            raise NetworkAttempt(f"network attempt: {what}{args[1:2]}")

        return _refuse

    monkeypatch.setattr(socket.socket, "connect", refuse("socket.connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("socket.connect_ex"))
    monkeypatch.setattr(socket.socket, "sendto", refuse("socket.sendto"))
    monkeypatch.setattr(socket, "create_connection", refuse("socket.create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("socket.getaddrinfo"))
    monkeypatch.setattr(requests.Session, "request", refuse("requests"))
    monkeypatch.setattr(tokenizers.Tokenizer, "from_pretrained", refuse("from_pretrained"))
    yield attempts
    assert attempts == []


@pytest.fixture(scope="module")
def wordllama() -> WordLlamaEmbedder:
    return WordLlamaEmbedder.load()


def test_every_memory_of_a_process_shares_one_wordllama_table(tmp_path: Path) -> None:
    from persona_memory.compose import make_embedder
    from persona_memory.settings import load_settings

    first = make_embedder(load_settings(None, {"storage.path": str(tmp_path / "a.db")}))
    again = make_embedder(load_settings(None, {"storage.path": str(tmp_path / "b.db")}))
    assert isinstance(first, WordLlamaEmbedder) and again is first  # loaded once, not per open
    small = make_embedder(load_settings(None, {"embedder.dim": 64}))
    assert small.dim == 64 and small is not first


async def test_wordllama_loads_and_embeds_offline(no_network: list[str]) -> None:
    embedder = WordLlamaEmbedder.load()
    rows = await embedder.embed([DAN_FLAT])
    _assert_unit_rows(rows, 1, 256)
    assert no_network == []


async def test_wordllama_contract(wordllama: WordLlamaEmbedder) -> None:
    embedder: Embedder = wordllama
    assert (embedder.name, embedder.dim) == ("wordllama-l2_supercat-256", 256)
    rows = await embedder.embed([DAN_FLAT, DAN_QUESTION, NOLAN, "🦙 zzqx"])
    _assert_unit_rows(rows, 4, 256)
    empty = await embedder.embed([])
    assert empty.shape == (0, 256) and empty.dtype == np.float32
    blank = await embedder.embed([""])
    assert blank.shape == (1, 256)
    np.testing.assert_array_equal(blank, np.zeros((1, 256)))
    with pytest.raises(InvalidInput):
        await embedder.embed(DAN_FLAT)
    await embedder.aclose()


async def test_wordllama_batches_match_single_texts(wordllama: WordLlamaEmbedder) -> None:
    texts = [DAN_FLAT, DAN_QUESTION, NOLAN] * 30
    batch = await wordllama.embed(texts)
    single = await wordllama.embed([NOLAN])
    np.testing.assert_allclose(batch[2], single[0], atol=1e-5)
    np.testing.assert_allclose(batch[-1], single[0], atol=1e-5)


async def test_wordllama_concurrent_embeds_agree(wordllama: WordLlamaEmbedder) -> None:
    texts = [f"{DAN_FLAT} number {i}" for i in range(40)]
    expected = wordllama.embed_sync(texts)
    got: dict[int, np.ndarray] = {}

    async def one(i: int) -> None:
        got[i] = await wordllama.embed([texts[i]])

    async with trio.open_nursery() as nursery:
        for i in range(len(texts)):
            nursery.start_soon(one, i)
    np.testing.assert_allclose(np.vstack([got[i] for i in range(len(texts))]), expected, atol=1e-5)


async def test_wordllama_semantics(wordllama: WordLlamaEmbedder) -> None:
    rows = await wordllama.embed([DAN_FLAT, DAN_QUESTION, NOLAN])
    assert float(rows[0] @ rows[1]) > float(rows[0] @ rows[2])


@pytest.mark.parametrize("dim", [64, 128])
async def test_wordllama_truncated_dims(dim: int, wordllama: WordLlamaEmbedder) -> None:
    small = WordLlamaEmbedder.load(dim=dim)
    assert small.name == f"wordllama-l2_supercat-{dim}"
    rows = await small.embed([DAN_FLAT, DAN_QUESTION, NOLAN])
    _assert_unit_rows(rows, 3, dim)
    assert float(rows[0] @ rows[1]) > float(rows[0] @ rows[2])
    full = await wordllama.embed([DAN_FLAT])
    np.testing.assert_allclose(rows[0], unit_rows(full[:, :dim])[0], atol=1e-5)


async def test_wordllama_vectors_survive_quantization(wordllama: WordLlamaEmbedder) -> None:
    rows = await wordllama.embed([DAN_FLAT, DAN_QUESTION])
    for row in rows:
        assert _cos(dequantize(*quantize(row)), row) > 0.99


def test_wordllama_rejects_unsupported_dim() -> None:
    with pytest.raises(InvalidInput, match="64, 128, 256"):
        WordLlamaEmbedder.load(dim=512)


def test_wordllama_missing_weights_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_network: list[str]
) -> None:
    _, tokenizer = wordllama_module._bundled_files()
    missing = tmp_path / "l2_supercat_256.safetensors"
    monkeypatch.setattr(wordllama_module, "_bundled_files", lambda: (missing, tokenizer))
    with pytest.raises(EmbedderUnavailable, match="(?s)l2_supercat_256.*Reinstall"):
        WordLlamaEmbedder.load()


def test_wordllama_corrupt_weights_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_network: list[str]
) -> None:
    _, tokenizer = wordllama_module._bundled_files()
    corrupt = tmp_path / "l2_supercat_256.safetensors"
    corrupt.write_bytes(b"not a safetensors file")
    monkeypatch.setattr(wordllama_module, "_bundled_files", lambda: (corrupt, tokenizer))
    with pytest.raises(EmbedderUnavailable, match="Reinstall") as info:
        WordLlamaEmbedder.load()
    assert info.value.__cause__ is not None


def test_wordllama_load_leaves_root_logging_alone() -> None:
    # wordllama calls logging.basicConfig(level=INFO) at import; load() must undo it.
    script = (
        "import logging\n"
        "from persona_memory.embedding import WordLlamaEmbedder\n"
        "WordLlamaEmbedder.load(dim=64)\n"
        "root = logging.getLogger()\n"
        "print(len(root.handlers), root.level)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.stdout.split() == ["0", str(logging.WARNING)]


async def test_wordllama_embeds_one_short_text_inline_and_the_rest_on_a_thread(wordllama, monkeypatch) -> None:
    from persona_memory.embedding import wordllama as module

    hops = []
    real = trio.to_thread.run_sync

    async def counted(fn, *args, **kwargs):
        hops.append(len(args[0]) if args else 0)
        return await real(fn, *args, **kwargs)

    monkeypatch.setattr(module.trio.to_thread, "run_sync", counted)
    topic = "How did the interview go?"
    one = await wordllama.embed([topic])
    assert hops == []  # a short topic costs no thread hop
    assert np.array_equal(one, wordllama.embed_sync([topic]))
    await wordllama.embed([topic, "and another"])
    await wordllama.embed(["x" * (module.INLINE_CHARS + 1)])
    assert hops == [2, 1]


def test_wordllama_one_text_is_the_batch_vector_to_float_rounding(wordllama: WordLlamaEmbedder) -> None:
    texts = [DAN_FLAT, DAN_QUESTION, NOLAN, "🦙 zzqx", "", "   ", "Ünïcödé façade, naïve café", "word " * 300]
    together = wordllama.embed_sync(texts)  # WordLlama's padded batch
    for text, batched in zip(texts, together):
        (alone,) = wordllama.embed_sync([text])  # the short way for one text
        assert alone.dtype == np.float32 and alone.shape == (256,)
        np.testing.assert_allclose(alone, batched, atol=1e-6)
    assert not wordllama.embed_sync([""]).any()


def test_wordllama_batch_is_the_librarys_batch_bit_for_bit(wordllama: WordLlamaEmbedder) -> None:
    # the batch path encodes each text alone and pads as encode_batch would: the vectors must
    # be the library's own, every bit (stored vectors and routing ties depend on them)
    words = "the a kayak river Tuesday 42 miles café naïve 🦙 zzqx repaired sister's, moved!".split()
    texts = [" ".join(words[(i * 7 + k) % len(words)] for k in range(i % 23)) for i in range(150)]
    texts[3], texts[70] = "", "word " * 300  # an empty text; a long one in the second batch
    for batch in (texts[:2], texts[:12], texts[:64], texts[:65], texts):
        ours = wordllama.embed_sync(batch)
        theirs = unit_rows(wordllama._inference.embed(list(batch), norm=False))
        assert ours.shape == theirs.shape and ours.tobytes() == theirs.tobytes()


def test_wordllama_batch_never_wakes_the_tokenizers_thread_pool(wordllama: WordLlamaEmbedder, monkeypatch) -> None:
    tokenizer = wordllama._inference.tokenizer
    calls = []

    class Watched:
        padding = tokenizer.padding

        def encode(self, *args, **kwargs):
            return tokenizer.encode(*args, **kwargs)

        def encode_batch(self, *args, **kwargs):
            calls.append(args)
            return tokenizer.encode_batch(*args, **kwargs)

    monkeypatch.setattr(wordllama._inference, "tokenizer", Watched())
    assert wordllama.embed_sync(["one short line", "and a second, longer line"]).shape == (2, 256)
    assert calls == []


@settings(max_examples=400)
@given(st.text(alphabet=st.sampled_from(list("ab xyz.,!?'’-:;()<>/s0159\t\néüß🦙İıſK中 ")), max_size=80))
@example("two  spaces")
@example(" leading and trailing ")
@example("a <s> special token, and </s>")
@example("tab\tand\nnewline 🦙")
@example("")
def test_wordllama_token_ids_put_together_from_words_are_the_tokenizers(text: str) -> None:
    """Each word's ids kept and joined give what the tokenizer gives for the whole text —
    spaces at the ends or doubled, tabs, newlines, special-token brackets and letters that
    change length when folded included."""
    embedder = _shared_wordllama()
    assert embedder._ids(text) == embedder._inference.tokenizer.encode(text, add_special_tokens=False).ids


def test_wordllama_encodes_a_word_once_and_keeps_it(wordllama: WordLlamaEmbedder, monkeypatch) -> None:
    tokenizer = wordllama._inference.tokenizer
    asked: list[str] = []

    class Watched:
        padding = tokenizer.padding

        def encode(self, text, **kwargs):
            asked.append(text)
            return tokenizer.encode(text, **kwargs)

    wordllama._words.clear()
    monkeypatch.setattr(wordllama._inference, "tokenizer", Watched())
    first = wordllama.embed_sync(["Mira fixed the kayak on Tuesday", "the kayak leaks again"])
    assert sorted(asked) == sorted(["Mira", "fixed", "the", "kayak", "on", "Tuesday", "leaks", "again"])
    asked.clear()
    again = wordllama.embed_sync(["Mira fixed the kayak on Tuesday", "the kayak leaks again"])
    assert asked == [] and again.tobytes() == first.tobytes()


@functools.lru_cache(maxsize=1)
def _shared_wordllama() -> WordLlamaEmbedder:
    return WordLlamaEmbedder.load()
