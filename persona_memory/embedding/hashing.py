"""A model-free embedder: signed feature hashing of words.

Each lower-cased word (``[a-z0-9']+``) is hashed with BLAKE2b to one dimension and a
sign, the signed one-hots are summed and the sum is L2-normalised. Two texts that share
words get a positive cosine; texts with no word in common get about 0 (exactly 0 unless
two different words collide in one dimension). Synonyms mean nothing to it: "flat" and
"apartment" are unrelated.

It is deterministic across processes and machines (no Python ``hash()``), needs no
weights, and is fast enough to call on the event loop, so it is the embedder for tests.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Sequence

import attrs
import numpy as np

from persona_memory.embedding.port import text_list
from persona_memory.embedding.vectors import unit_rows
from persona_memory.errors import InvalidInput

_WORD = re.compile(r"[a-z0-9']+")


@functools.lru_cache(maxsize=65_536)
def _slot(word: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
    h = int.from_bytes(digest, "little")
    return (h >> 1) % dim, (1.0 if h & 1 else -1.0)


def _check_dim(_instance: object, _attribute: object, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidInput(f"HashingEmbedder dim must be a positive int, got {value!r}")


@attrs.frozen
class HashingEmbedder:
    """Signed feature hashing of words; implements ``Embedder``.

    Args:
        dim: Vector length (default 64). More dimensions mean fewer word collisions.
    """

    dim: int = attrs.field(default=64, validator=_check_dim)
    name: str = attrs.field(init=False)

    @name.default
    def _name(self) -> str:
        return f"hashing-{self.dim}"

    @property
    def portable(self) -> Callable[[Sequence[str]], np.ndarray]:
        """``embed_sync``: it pickles as the dimension (``Embedder.portable``)."""
        return self.embed_sync

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        """``embed`` without the ``await``; same arguments, result and errors."""
        items = text_list(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        for row, text in enumerate(items):
            for word in _WORD.findall(text.lower()):
                index, sign = _slot(word, self.dim)
                out[row, index] += sign
        return unit_rows(out)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` on the calling thread (it is cheap).

        Args:
            texts: The texts to embed; may be empty.

        Returns:
            ``float32`` array ``(len(texts), dim)`` of unit rows; zero rows for texts
            without words.

        Raises:
            InvalidInput: ``texts`` is a bare ``str`` or holds a non-string.
        """
        return self.embed_sync(texts)

    async def aclose(self) -> None:
        """Nothing to release."""
