"""Text embeddings: the ``Embedder`` port, its two implementations, and vector helpers.

See ``port`` for the contract every embedder keeps.
"""

from __future__ import annotations

from persona_memory.embedding.hashing import HashingEmbedder
from persona_memory.embedding.port import Embedder
from persona_memory.embedding.vectors import cosine_to, dequantize, quantize, unit_rows
from persona_memory.embedding.wordllama import WordLlamaEmbedder

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "WordLlamaEmbedder",
    "cosine_to",
    "dequantize",
    "quantize",
    "unit_rows",
]
