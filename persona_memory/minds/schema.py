"""The JSON schemas of the mind's two answers, for endpoints that constrain what a model writes.

``extraction_schema()`` is the shape of call A's answer, ``{"memories": [...]}``;
``routing_schema(labels)`` the shape of call B's, ``{"event": ..., "old_id": ...}`` for the
neighbours labelled ``labels``. ``response_format(name, schema)`` wraps one for a request.

Rules:
- One source of truth: every limit here is read from the constants the checks use — the
  kinds, the importance scale, the text limit (``rows``), the subject forms and the ``u:`` id
  (``ids``), the partial date (``rows``), the routing events (``write.routing.Event``). A
  change there changes the schema; nothing is typed twice.
- The schema narrows, the checks decide. An answer in the schema can still be dropped by
  ``write.validation`` for what only the slice knows (a subject not present, evidence not in
  the slice, an importance below ``write.importance_min``, two sentences in one text) or for
  what ties two fields together, which a strict schema cannot say (a ``self`` memory needs a
  counterpart; UPDATE and CLOSE need an ``old_id``). An answer past a limit the schema shares
  with the checks — a kind, the importance scale, the text limit, the form of a subject or a
  date, an event, a label not offered — is refused by both.
- OpenAI's strict subset, which vLLM, Ollama and llama-server also read: every object lists
  all of its properties as required and allows no others; a field that may be absent is
  required and may be ``null`` (``anyOf`` with ``{"type": "null"}``); the only limits are
  ``enum``, ``pattern``, ``minimum``/``maximum`` and ``minItems``. OpenAI refuses
  ``maxLength`` in strict mode, so the text's limit is a pattern.
- Patterns are anchored and use only what llama.cpp's grammar converter reads as a regular
  expression reads them: groups without ``?``, character classes, ``{m,n}``; no ``\\d``. The
  text is one line of plain characters (``_PLAIN_CHAR``): the schema refuses a quote in it,
  which validation would take.
- Values are built fresh on each call: a caller may change what it gets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import ids
from ..rows import IMPORTANCE_HIGHEST, IMPORTANCE_LOWEST, KINDS, PARTIAL_DATE, TEXT_LIMIT
from ..write.routing import Event

EXTRACTION = "persona_memory_extraction"
ROUTING = "persona_memory_routing"

Schema = dict[str, Any]

# A character JSON writes as itself: no quote, backslash or control character (a line break
# among them). A text of these has no escapes, so a server that matches the pattern against
# the JSON it writes (llama.cpp, xgrammar) and one that matches the decoded string (OpenAI)
# read the same length, and the first cannot end the string early or leave it invalid.
_PLAIN_CHAR = r'[^"\\\x00-\x1F]'


def _nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


def _anchored(pattern: str) -> str:
    return f"^{pattern}$"


def _object(properties: dict[str, Schema]) -> Schema:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def memory_schema() -> Schema:
    """One candidate memory, as ``write.validation`` reads it."""
    return _object({
        "subject": {"type": "string", "pattern": _anchored(f"({ids.WORLD}|{ids.SELF}|{ids.USER_REF})")},
        "counterpart": _nullable({"type": "string", "pattern": _anchored(ids.USER_REF)}),
        "kind": {"type": "string", "enum": list(KINDS)},
        "text": {"type": "string", "pattern": _anchored(f"{_PLAIN_CHAR}{{1,{TEXT_LIMIT}}}")},
        "importance": {"type": "integer", "minimum": IMPORTANCE_LOWEST, "maximum": IMPORTANCE_HIGHEST},
        "valid_from": _nullable({"type": "string", "pattern": _anchored(PARTIAL_DATE)}),
        "evidence": {"type": "array", "items": {"type": "integer"}, "minItems": 1},
    })


def extraction_schema() -> Schema:
    """Call A's answer: ``{"memories": [memory, ...]}``, possibly empty."""
    return _object({"memories": {"type": "array", "items": memory_schema()}})


def routing_schema(labels: Sequence[str]) -> Schema:
    """Call B's answer for the neighbours shown as ``labels`` (``"0"``, ``"1"``, …): an event,
    and ``old_id``, one of those labels or ``null`` (ADD and NONE name none). With no
    neighbour, ``old_id`` can only be ``null``."""
    old_id: Schema = (
        _nullable({"type": "string", "enum": list(labels)}) if labels else {"type": "null"}
    )
    return _object({"event": {"type": "string", "enum": [e.value for e in Event]}, "old_id": old_id})


def response_format(name: str, schema: Schema) -> Schema:
    """The ``response_format`` of a chat completion that asks for ``schema``, strictly
    (OpenAI's shape, which vLLM, Ollama's /v1 endpoint and llama-server accept)."""
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}
