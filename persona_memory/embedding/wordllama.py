"""Semantic embeddings from the WordLlama weights bundled in the ``wordllama`` wheel.

WordLlama is a static token-embedding table (32 000 Llama-2 tokens x 256 dims) trained
so that the mean of a text's token vectors is a useful sentence embedding. The wheel
ships the table (``wordllama/weights/l2_supercat_256.safetensors``) and its tokenizer
(``wordllama/tokenizers/l2_supercat_tokenizer_config.json``); we read both by path and
never touch the network. ``WordLlama.load`` is not used: it looks for the tokenizer in
``wordllama/tokenizer/`` (singular), so with downloads disabled it fails, and with them
enabled it would fetch from the internet.

The table is matryoshka-trained: its first 64 or 128 columns are a smaller embedding of
their own. ``load(dim=64)`` trades some quality for a quarter of the storage.

Importing ``wordllama`` calls ``logging.basicConfig(level=INFO)``; ``load`` undoes that so
the application's logging configuration stays its own.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np
import trio

from persona_memory.embedding.port import text_list
from persona_memory.embedding.vectors import unit_rows
from persona_memory.errors import EmbedderUnavailable, InvalidInput

if TYPE_CHECKING:
    from wordllama.inference import WordLlamaInference

DIMS = (64, 128, 256)
_CONFIG = "l2_supercat"
_WEIGHTS = Path("weights") / f"{_CONFIG}_256.safetensors"
_TOKENIZER = Path("tokenizers") / f"{_CONFIG}_tokenizer_config.json"
_TENSOR = "embedding.weight"
_FIX = "Reinstall it: pip install --force-reinstall 'wordllama>=0.3.6'"


def _package_dir() -> Path:
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(f"the wordllama package is not installed. {_FIX}")
    return Path(next(iter(spec.submodule_search_locations)))


def _bundled_files() -> tuple[Path, Path]:
    """Paths of the bundled weights and tokenizer, found without importing wordllama."""
    root = _package_dir()
    return root / _WEIGHTS, root / _TOKENIZER


def _import_inference() -> Any:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        from wordllama.inference import WordLlamaInference
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    return WordLlamaInference


BATCH = 64
"""Texts per batch, as ``WordLlamaInference.embed`` batches them (its ``batch_size``)."""


def _pads_as_expected(padding: dict | None) -> bool:
    """The padding ``WordLlamaInference`` sets up (``enable_padding()``): to the longest of a
    batch, on the right — what ``WordLlamaEmbedder._pooled`` reproduces."""
    return (
        padding is not None
        and padding.get("length") is None
        and padding.get("pad_to_multiple_of") is None
        and padding.get("direction") == "right"
        and isinstance(padding.get("pad_id"), int)
    )


WORDS_KEPT = 50_000
"""Words whose token ids an embedder keeps (``WordLlamaEmbedder._ids``): a few megabytes."""

INLINE_CHARS = 400
"""One text up to this long is embedded on the trio thread, as embedding it costs about as
much as a hop to a worker thread would; anything longer, or several texts, goes to a worker
thread."""


@attrs.frozen
class WordLlamaEmbedder:
    """WordLlama ``l2_supercat`` sentence embeddings; implements ``Embedder``.

    Build it with ``WordLlamaEmbedder.load()``. ``embed`` runs on a worker thread (one short
    text inline).
    Its vectors put "Where does Dan live?" near "Dan owns a flat in Xuhui", but it is a
    bag of tokens: word order and negation barely register.
    """

    dim: int
    _inference: WordLlamaInference = attrs.field(alias="inference", repr=False)
    name: str = attrs.field(init=False)
    _words: dict[str, list[int]] = attrs.field(init=False, factory=dict, repr=False, eq=False)

    @name.default
    def _name(self) -> str:
        return f"wordllama-{_CONFIG}-{self.dim}"

    @property
    def portable(self) -> BundledWordLlama:
        """This embedder as a picklable function of texts for a worker process: there it
        loads the same bundled table once and gives ``embed_sync``'s rows."""
        return BundledWordLlama(self.dim)

    @classmethod
    def load(cls, dim: int = 256) -> WordLlamaEmbedder:
        """Load the bundled weights and tokenizer from disk. Blocking; no network.

        Args:
            dim: 256 (full), or 128 or 64 (the table's leading columns).

        Returns:
            A ready embedder named ``f"wordllama-l2_supercat-{dim}"``.

        Raises:
            InvalidInput: ``dim`` is not one of 64, 128, 256.
            EmbedderUnavailable: wordllama is not installed, a bundled file is missing,
                or it could not be read. The message says which and how to fix it.
        """
        if dim not in DIMS:
            raise InvalidInput(f"WordLlamaEmbedder dim must be one of {DIMS}, got {dim!r}")
        weights, tokenizer_file = _bundled_files()
        missing = [str(p) for p in (weights, tokenizer_file) if not p.is_file()]
        if missing:
            raise EmbedderUnavailable(
                f"the wordllama wheel is missing its bundled {' and '.join(missing)}. {_FIX}"
            )
        try:
            from safetensors import safe_open
            from tokenizers import Tokenizer

            inference_cls = _import_inference()
            with safe_open(str(weights), framework="np") as f:
                table = f.get_tensor(_TENSOR)
            if table.ndim != 2 or table.shape[1] < dim:
                raise ValueError(f"{_TENSOR} has shape {table.shape}, need (vocab, >={dim})")
            tokenizer = Tokenizer.from_file(str(tokenizer_file))
            inference = inference_cls(table[:, :dim], tokenizer)
        except Exception as exc:
            raise EmbedderUnavailable(
                f"could not load WordLlama from {weights} and {tokenizer_file}: {exc}. {_FIX}"
            ) from exc
        return cls(dim=dim, inference=inference)

    @classmethod
    def shared(cls, dim: int = 256) -> WordLlamaEmbedder:
        """The process's one embedder of ``dim``, loaded at the first call and kept: every
        memory the process opens uses it (what ``[embedder] kind = "wordllama"`` makes).

        Loading parses the tokenizer in a call that holds the GIL throughout, stalling every
        other thread of the process — an asyncio loop beside the memory included; kept, the
        table is loaded once per process, and a memory opened again does not pay it.

        Raises:
            as ``load``.
        """
        return _loaded(dim)

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        """``embed`` without the thread hop: blocks the caller. Same contract.

        One text takes a shorter way than WordLlama's batch (no padding, no mask): the mean
        of its tokens' rows, normalised — the same vector to float rounding, in about half
        the time (a room topic, a message for the recall note).
        """
        items = text_list(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(items) == 1:
            return self._embed_one(items[0])[None]
        return unit_rows(self._pooled(items))

    def _pooled(self, texts: list[str]) -> np.ndarray:
        """``WordLlamaInference.embed(texts, norm=False)``, bit for bit, without its
        ``encode_batch``: that call wakes the tokenizer's thread pool, which costs more than
        it saves for a slice's dozen short texts (and the pool's threads take another core
        meanwhile). Each text is encoded alone and
        padded here as ``encode_batch`` pads a batch — to the longest of each batch of
        ``BATCH``, on the right, with the pad id, mask 0 — and the same arrays go through the
        library's own ``avg_pool``. A tokenizer padded any other way takes the library's path.
        """
        inference = self._inference
        tokenizer = inference.tokenizer
        padding = tokenizer.padding
        if not _pads_as_expected(padding):
            return inference.embed(texts, norm=False)
        table = inference.embedding
        out = np.empty((len(texts), table.shape[1]), dtype=np.float32)
        for start in range(0, len(texts), BATCH):
            encoded = [self._ids(t) for t in texts[start : start + BATCH]]
            width = max(map(len, encoded))
            input_ids = np.full((len(encoded), width), padding["pad_id"], dtype=np.int32)
            mask = np.zeros((len(encoded), width), dtype=np.float32)
            for row, ids in enumerate(encoded):
                input_ids[row, : len(ids)] = ids
                mask[row, : len(ids)] = 1.0
            np.clip(input_ids, 0, table.shape[0] - 1, out=input_ids)
            out[start : start + len(encoded)] = inference.avg_pool(table[input_ids], mask)
        return out

    def _ids(self, text: str) -> list[int]:
        """``tokenizer.encode(text).ids``, put together from each word's ids, kept per word.

        The tokenizer writes every space as "▁" and prepends one, then merges pairs by BPE; no
        merge of its table joins a piece to a following "▁", so a text of words separated by
        single spaces is the concatenation of its words', each encoded alone (which prepends
        the "▁" the space stood for). Texts this does not cover — a space at either end or
        doubled, or a "<" that may open a special token — are encoded whole. Words are kept
        up to ``WORDS_KEPT``; past that the cache starts again.
        """
        tokenizer = self._inference.tokenizer
        if not text or "<" in text or "  " in text or text[0] == " " or text[-1] == " ":
            return tokenizer.encode(text, add_special_tokens=False).ids
        words = self._words
        out: list[int] = []
        for word in text.split(" "):
            ids = words.get(word)
            if ids is None:
                if len(words) >= WORDS_KEPT:
                    words.clear()
                ids = words[word] = tokenizer.encode(word, add_special_tokens=False).ids
            out.extend(ids)
        return out

    def _embed_one(self, text: str) -> np.ndarray:
        ids = self._ids(text)
        table = self._inference.embedding
        if not ids:
            return np.zeros(self.dim, dtype=np.float32)
        if max(ids) >= len(table):  # WordLlama clamps such ids; so does its batch path
            return unit_rows(self._inference.embed([text], norm=False))[0]
        summed = np.add.reduce(table[ids], axis=0)
        norm = float(np.sqrt(summed @ summed))
        return summed / np.float32(norm) if norm > 0 else np.zeros(self.dim, dtype=np.float32)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` on a worker thread — or inline, for one short text (a room topic,
        a message for the recall note): that costs less than the hop to a thread would.

        Args:
            texts: The texts to embed; may be empty.

        Returns:
            ``float32`` array ``(len(texts), dim)`` of unit rows; a zero row for ``""``.

        Raises:
            InvalidInput: ``texts`` is a bare ``str`` or holds a non-string.
        """
        items = text_list(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(items) == 1 and len(items[0]) <= INLINE_CHARS:
            return self.embed_sync(items)
        return await trio.to_thread.run_sync(self.embed_sync, items)

    async def aclose(self) -> None:
        """Nothing to release: the table is plain memory."""


@attrs.frozen
class BundledWordLlama:
    """``WordLlamaEmbedder.load(dim).embed_sync`` as a value that pickles as its ``dim``
    (``Embedder.portable``): a worker process loads the bundled table at its first call
    and keeps it."""

    dim: int

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return _loaded(self.dim).embed_sync(texts)


@functools.lru_cache(maxsize=len(DIMS))
def _loaded(dim: int) -> WordLlamaEmbedder:
    return WordLlamaEmbedder.load(dim)
