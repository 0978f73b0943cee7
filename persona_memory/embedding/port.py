"""The embedder port: what the rest of persona-memory needs from a text-embedding model.

An embedder turns texts into vectors whose dot product measures how related the texts are.
Anything with this shape is an embedder; the package ships two:

- ``WordLlamaEmbedder``: semantic vectors from the WordLlama weights bundled in the
  ``wordllama`` wheel. Offline, CPU-only, loads in well under a second.
- ``HashingEmbedder``: signed feature hashing of words. No model, so related means
  "shares words". Deterministic; meant for tests, but a real embedder.

The contract every implementation keeps:

``name``
    Identifies the model *and* its dimension, e.g. ``"wordllama-l2_supercat-256"``.
    Stored next to every vector. Vectors with different names live in different spaces:
    never compare them; re-embed the text instead.
``dim``
    Length of every vector this embedder returns.
``await embed(texts)``
    One row per text, in order: a ``float32`` array of shape ``(len(texts), dim)``.
    Each row is L2-normalised, so a dot product is a cosine. A text the model has no
    tokens for (the empty string) gives an all-zero row, whose cosine with anything is 0.
    ``embed([])`` returns shape ``(0, dim)``. Passing a bare ``str`` is an error
    (``InvalidInput``), since a ``str`` is a sequence of one-character texts.
    Model failures raise ``ProviderError`` (``EmbedderUnavailable`` if it cannot be
    loaded or reached). CPU-heavy implementations must not block the trio event loop:
    they run the work in ``trio.to_thread.run_sync`` (a single short text may be embedded
    inline when that costs less than the hop).
``await aclose()``
    Releases whatever the embedder holds (HTTP clients, threads). Idempotent.
``portable`` (optional)
    A picklable function of texts that gives the rows ``embed`` gives, for a worker
    process (the offline reader's: ``write.offloaded``); an embedder without one (a remote
    model's) is only called through ``embed``.

Example::

    embedder = WordLlamaEmbedder.load()
    rows = await embedder.embed(["Dan owns a flat in Xuhui", "Where does Dan live?"])
    similarity = float(rows[0] @ rows[1])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from persona_memory.errors import InvalidInput


class Embedder(Protocol):
    """A text-embedding model, as persona-memory uses it. See the module docstring."""

    @property
    def name(self) -> str:
        """Model and dimension, e.g. ``"wordllama-l2_supercat-256"``; a vector's space."""
        ...

    @property
    def dim(self) -> int:
        """Length of every returned row."""
        ...

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``.

        Args:
            texts: The texts to embed; may be empty.

        Returns:
            ``float32`` array of shape ``(len(texts), dim)``, rows L2-normalised
            (all-zero for texts without tokens).

        Raises:
            InvalidInput: ``texts`` is a bare ``str`` or holds a non-string.
            ProviderError: The model failed.
        """
        ...

    async def aclose(self) -> None:
        """Release resources. Safe to call more than once."""
        ...


def text_list(texts: Sequence[str]) -> list[str]:
    """Check an ``embed`` argument and return it as a list; for implementations.

    Args:
        texts: What the caller passed to ``embed``.

    Returns:
        The same texts as a new list.

    Raises:
        InvalidInput: ``texts`` is a bare ``str`` or one of its items is not a ``str``.
    """
    if isinstance(texts, str):
        raise InvalidInput("embed() takes a sequence of texts, not a str: wrap it as [text]")
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise InvalidInput(f"embed() texts[{i}] is {type(text).__name__}, not str")
    return items
