"""``HttpEmbedder``: the ``Embedder`` port on any OpenAI-compatible ``/embeddings`` endpoint.

Rules:
- One ``POST /embeddings`` per batch of at most ``batch_size`` texts:
  ``{"model": ..., "input": [...], "dimensions": dim}``; ``dimensions`` is sent only when
  ``send_dimensions`` is true (text-embedding-3 models shorten their vectors to it; older models
  and many local servers refuse the parameter, and answer their native size).
- Texts with nothing but whitespace are not sent (OpenAI refuses an empty input): their rows
  are all zero, as the port promises.
- The answer is checked before it is used: one vector per input (matched by ``index``, which
  must number the inputs exactly once), each of length ``dim``, every component a finite
  number. Anything else is ``ProviderNonsense``. Rows come back L2-normalised ``float32``.
- An endpoint that cannot be reached through the retries raises ``EmbedderUnavailable`` (the
  port's error for it); refusals and nonsense pass through as ``ProviderRefused`` and
  ``ProviderNonsense``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from persona_memory.embedding.port import text_list
from persona_memory.embedding.vectors import unit_rows
from persona_memory.errors import EmbedderUnavailable, InvalidInput, ProviderNonsense, ProviderUnreachable
from persona_memory.providers.http import JsonEndpoint

_FLOAT32_MAX = float(np.finfo(np.float32).max)


class HttpEmbedder:
    """OpenAI-compatible embeddings; implements ``Embedder``.

    Args:
        endpoint: Where to send the requests; the embedder owns it and closes it in ``aclose``.
        model: The embedding model the endpoint knows, e.g. ``"text-embedding-3-small"``.
        dim: The length of the vectors the endpoint returns (and is asked for).
        send_dimensions: Whether to ask for ``dim`` with the ``dimensions`` parameter.
        batch_size: At most this many texts per request.

    Raises:
        InvalidInput: ``dim`` or ``batch_size`` is not a positive int, or ``model`` is empty.
    """

    def __init__(
        self,
        endpoint: JsonEndpoint,
        model: str,
        dim: int,
        *,
        send_dimensions: bool = True,
        batch_size: int = 256,
    ) -> None:
        for label, value in (("dim", dim), ("batch_size", batch_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInput(f"HttpEmbedder {label} must be a positive int, got {value!r}")
        if not model.strip():
            raise InvalidInput("HttpEmbedder needs a model name")
        self.endpoint = endpoint
        self.model = model
        self._dim = dim
        self.send_dimensions = send_dimensions
        self.batch_size = batch_size

    @property
    def name(self) -> str:
        """``http-<model>-<dim>``: the space the vectors live in."""
        return f"http-{self.model}-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` through the endpoint, in order.

        Returns:
            ``float32`` array ``(len(texts), dim)`` of unit rows; zero rows for blank texts.

        Raises:
            InvalidInput: ``texts`` is a bare ``str`` or holds a non-string.
            EmbedderUnavailable: the endpoint could not be reached through the retries.
            ProviderRefused: the endpoint refused (bad key, unknown model, ``dimensions``
                not supported).
            ProviderNonsense: the answer is not one finite vector of ``dim`` per input.
        """
        items = text_list(texts)
        out = np.zeros((len(items), self._dim), dtype=np.float32)
        wanted = [i for i, text in enumerate(items) if text.strip()]
        for start in range(0, len(wanted), self.batch_size):
            batch = wanted[start : start + self.batch_size]
            out[batch] = await self._embed_batch([items[i] for i in batch])
        return unit_rows(out)

    async def _embed_batch(self, inputs: list[str]) -> np.ndarray:
        payload: dict[str, Any] = {"model": self.model, "input": inputs}
        if self.send_dimensions:
            payload["dimensions"] = self._dim
        try:
            answer = await self.endpoint.post_json("/embeddings", payload)
        except ProviderUnreachable as exc:
            raise EmbedderUnavailable(f"the embedding endpoint is unreachable: {exc}") from exc
        return embedding_rows(answer, len(inputs), self._dim)

    async def aclose(self) -> None:
        """Close the endpoint. Safe to call more than once."""
        await self.endpoint.aclose()


def embedding_rows(answer: dict[str, Any], count: int, dim: int) -> np.ndarray:
    """The ``(count, dim)`` float32 matrix in an ``/embeddings`` answer, rows in input order.

    Raises:
        ProviderNonsense: ``data`` is not ``count`` items of ``{"index", "embedding"}``, the
            indexes do not number the inputs exactly once, or a vector is not ``dim`` finite
            numbers.
    """
    data = answer.get("data")
    if not isinstance(data, list) or len(data) != count:
        got = len(data) if isinstance(data, list) else "no"
        raise ProviderNonsense(f"the embeddings answer has {got} vectors for {count} inputs")
    rows = np.zeros((count, dim), dtype=np.float32)
    seen: set[int] = set()
    for position, item in enumerate(data):
        if not isinstance(item, dict):
            raise ProviderNonsense(f"embeddings data[{position}] is not an object")
        index = item.get("index", position)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise ProviderNonsense(f"embeddings data[{position}] has index {index!r}")
        if index in seen:
            raise ProviderNonsense(f"embeddings answer gives index {index} twice")
        seen.add(index)
        vector = item.get("embedding")
        if not isinstance(vector, list) or len(vector) != dim:
            size = len(vector) if isinstance(vector, list) else type(vector).__name__
            raise ProviderNonsense(
                f"embeddings data[{position}] has {size} components; expected {dim} "
                "(check embedder.dim against the model)"
            )
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vector):
            raise ProviderNonsense(f"embeddings data[{position}] holds a value that is not a number")
        values = np.asarray(vector, dtype=np.float64)
        if not np.all(np.isfinite(values)) or np.any(np.abs(values) > _FLOAT32_MAX):
            raise ProviderNonsense(f"embeddings data[{position}] holds NaN, infinity or a huge value")
        rows[index] = values
    return rows
