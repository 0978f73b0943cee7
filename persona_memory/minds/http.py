"""``HttpMind``: the write path's two calls (design §2) on any OpenAI-compatible chat endpoint.

Each call is one ``POST /chat/completions`` with two messages: the system message is a prompt
file beside the code (``prompts/extract.md``, ``prompts/route.md``) with the persona's name
filled in; the user message is the request's data, rendered here. Temperature is 0.

The answer's form is ``[mind] response_format``:

- ``"json_schema"`` (the default): ``response_format`` carries the answer's JSON schema
  (``minds.schema``), strict, so a server that constrains decoding — OpenAI, vLLM, Ollama's
  /v1 endpoint, llama.cpp's llama-server — lets the model write nothing else: a known kind, a
  subject id, importance 1..10, a text within the limit, a routing event, a neighbour's label.
- ``"json_object"``: only some JSON object is asked for, for an endpoint without schemas.

Rules:
- The prompts carry the extraction and routing rules (design §2.1, §2.2 and §7); this module
  only renders the data. They describe the same shapes the schemas constrain.
- The extraction call is told the room's situation (``situation``): private or group, the
  topic, a kit mounted before or after the lines, how many people's lines are withheld. The
  topic and the kit's name are people's text: they are rendered as JSON strings, as data.
- Transcript lines are rendered one JSON object per line, so a line that imitates another line
  or a heading ("[999] u:1: ...") stays visibly inside its own ``"text"``.
- The answer is parsed, not trusted: an answer cut off at the token limit, empty, refused, not
  JSON or not a JSON object raises ``ProviderNonsense``. A JSON object is returned as it is —
  a schema narrows what a model writes, it proves nothing: checking the fields is
  ``write.validation``'s job and mapping ``old_id`` is ``write.routing``'s.
- Transport failures come from ``JsonEndpoint`` (``ProviderUnreachable``, ``ProviderRefused``).
  An endpoint that refuses the schema itself (a 400 or 422 that speaks of the response format,
  the schema or a grammar) raises ``ResponseFormatRefused``, which names the setting to change.
"""

from __future__ import annotations

import functools
import json
import re
from datetime import date
from importlib import resources
from string import Template
from collections.abc import Callable
from typing import Any

from persona_memory.errors import (
    ConfigError,
    ProviderInputTooLong,
    ProviderNonsense,
    ProviderRefused,
    ResponseFormatRefused,
)
from persona_memory.ids import persona_name
from persona_memory.minds import schema as schemas
from persona_memory.minds.port import ExtractionRequest, Line, RoutingRequest
from persona_memory.providers.http import JsonEndpoint
from persona_memory.settings import RESPONSE_FORMATS

_FENCE = re.compile(r"^```[A-Za-z]*\s*\n(.*)\n\s*```$", re.DOTALL)
_ABOUT_THE_FORMAT = re.compile(
    r"response.?format|json.?schema|\bschema\b|grammar|structured.?output", re.IGNORECASE
)


@functools.cache
def prompt(name: str) -> Template:
    """The prompt file ``prompts/<name>.md``, as a ``string.Template`` over ``$name``/``$slug``."""
    path = resources.files("persona_memory").joinpath("prompts", f"{name}.md")
    return Template(path.read_text(encoding="utf-8"))


def _day(d: date) -> str:
    return d.strftime("%a %Y-%m-%d")


def _line(line: Line) -> str:
    return json.dumps(
        {
            "id": line.id,
            "at": line.at.strftime("%a %Y-%m-%d %H:%M"),
            "speaker": line.speaker,
            "text": line.text,
        },
        ensure_ascii=False,
    )


def _system(name: str, slug: str) -> str:
    return prompt(name).substitute(name=persona_name(slug), slug=slug)


def situation(request: ExtractionRequest) -> list[str]:
    """The room's situation as the extraction call is told it: private or group, the topic,
    a game or role-play mounted before or after the lines, and whose lines are left out."""
    name = persona_name(request.persona)
    if request.private and len(request.present) == 1:
        room = f"a private chat between {name} and {request.present[0].ref}"
    elif request.private:
        room = f"a private chat with {name}"
    else:
        room = f"a group room with {name}"
    out = [f"This room is {room}."]
    if request.topic:
        out.append("The room's topic (what it was opened about; nobody said it): "
                   + json.dumps(request.topic, ensure_ascii=False))
    else:
        out.append("The room has no topic.")
    if request.kit_earlier:
        out.append(f"A game or role-play ({json.dumps(request.kit_earlier, ensure_ascii=False)}) was "
                   "mounted in this room before some of these lines: people may still talk in "
                   "character or about the game.")
    if request.kit_later:
        out.append(f"A game or role-play ({json.dumps(request.kit_later, ensure_ascii=False)}) was "
                   "mounted in this room after these lines; they were said before it.")
    if not (request.kit_earlier or request.kit_later):
        out.append("No game or role-play was mounted in this room around these lines.")
    if request.withheld:
        who = "person present keeps" if request.withheld == 1 else "people present keep"
        out.append(f"{request.withheld} other {who} their memory switched off: their lines are "
                   "left out; write nothing about them.")
    return out


def extraction_messages(request: ExtractionRequest) -> list[dict[str, str]]:
    """The chat messages of call A: the extraction prompt, then the slice as data."""
    name = persona_name(request.persona)
    people = [
        f'- {p.ref}, shown as "{p.name}"' if p.name else f"- {p.ref}" for p in request.present
    ] or ["- (nobody)"]
    others = [p for p in request.personas if p != request.persona]
    parts = [
        f"Today is {_day(request.today)}.",
        *situation(request),
        "",
        "People present (write about them by these ids only):",
        *people,
        "",
        "Other personas present: " + (", ".join(others) if others else "none") + ".",
        "",
        f"What {name} already remembers about the people present:",
        request.block.strip() or "(nothing yet)",
        "",
        f"The transcript since {name} last took notes, one line per row:",
        *(_line(line) for line in request.lines),
        "",
        'Answer with the JSON object {"memories": [...]}.',
    ]
    return [
        {"role": "system", "content": _system("extract", request.persona)},
        {"role": "user", "content": "\n".join(parts)},
    ]


def routing_messages(request: RoutingRequest) -> list[dict[str, str]]:
    """The chat messages of call B: the routing prompt, then one candidate and its neighbours."""
    candidate = {"subject": request.subject, "kind": request.kind, "text": request.text}
    if request.valid_from:
        candidate["valid_from"] = request.valid_from
    neighbours = [{"id": n.label, "text": n.text} for n in request.neighbours]
    parts = [
        "The candidate memory:",
        json.dumps(candidate, ensure_ascii=False),
        "",
        "Existing memories about the same subject:",
        json.dumps(neighbours, ensure_ascii=False),
        "",
        'Answer with the JSON object {"event": ..., "old_id": ...}.',
    ]
    return [
        {"role": "system", "content": _system("route", request.persona)},
        {"role": "user", "content": "\n".join(parts)},
    ]


def chat_json(answer: dict[str, Any]) -> dict[str, Any]:
    """The JSON object in a chat completion's first choice.

    A reply wrapped in one Markdown code fence (some local servers add one even in JSON mode)
    is unwrapped; nothing else is repaired.

    Raises:
        ProviderNonsense: no choice, a cut-off or filtered or refused answer, empty content,
            content that is not JSON, or JSON that is not an object.
    """
    choices = answer.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ProviderNonsense("the chat completion has no choices")
    choice = choices[0]
    finish = choice.get("finish_reason")
    if finish == "length":
        raise ProviderNonsense("the answer was cut off at the token limit (finish_reason 'length')")
    if finish == "content_filter":
        raise ProviderNonsense("the endpoint's content filter withheld the answer")
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ProviderNonsense("the chat completion's choice has no message")
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        raise ProviderNonsense(f"the model refused: {refusal.strip()[:200]!r}")
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ProviderNonsense("the model answered nothing (empty content)")
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        value = json.loads(text)
    except ValueError:
        raise ProviderNonsense(f"the model's answer is not JSON: {text[:120]!r}") from None
    if not isinstance(value, dict):
        raise ProviderNonsense(f"the model answered a JSON {type(value).__name__}, not an object")
    return value


def refuses_the_format(refusal: ProviderRefused) -> bool:
    """Whether a refusal is about the answer format asked for: a 400 or 422 whose explanation
    speaks of the response format, a JSON schema or a grammar (OpenAI: "'response_format' of
    type 'json_schema' is not supported with this model"; llama-server: a schema it cannot
    turn into a grammar). A request too long for the model is not."""
    return (
        not isinstance(refusal, ProviderInputTooLong)
        and refusal.status in (400, 422)
        and _ABOUT_THE_FORMAT.search(refusal.detail) is not None
    )


class HttpMind:
    """The ``Mind`` port on an OpenAI-compatible ``/chat/completions`` endpoint.

    Args:
        endpoint: Where to send the calls; the mind owns it and closes it in ``aclose``.
        model: The model name the endpoint knows, e.g. ``"gpt-4o-mini"``.
        response_format: ``"json_schema"`` (each answer's schema, strict) or ``"json_object"``
            (``[mind] response_format``; see the module docstring).

    Raises:
        ConfigError: ``response_format`` is neither.
    """

    def __init__(self, endpoint: JsonEndpoint, model: str, response_format: str = "json_schema") -> None:
        if response_format not in RESPONSE_FORMATS:
            raise ConfigError(
                f"mind.response_format must be {' or '.join(map(repr, RESPONSE_FORMATS))}, "
                f"got {response_format!r}"
            )
        self.endpoint = endpoint
        self.model = model
        self.response_format = response_format

    async def extract(self, request: ExtractionRequest) -> dict[str, Any]:
        """Call A: candidate memories from the slice, as the model's JSON object.

        Raises:
            ProviderUnreachable, ProviderRefused: from the endpoint (see ``JsonEndpoint``).
            ResponseFormatRefused: the endpoint does not take the schema (see the module).
            ProviderNonsense: the answer was not a JSON object (see ``chat_json``).
        """
        return await self._complete(
            extraction_messages(request), schemas.EXTRACTION, schemas.extraction_schema
        )

    async def route(self, request: RoutingRequest) -> dict[str, Any]:
        """Call B: what to do with one candidate, as the model's JSON object.

        Raises:
            ProviderUnreachable, ProviderRefused, ResponseFormatRefused, ProviderNonsense: as
                ``extract``.
        """
        labels = [n.label for n in request.neighbours]
        return await self._complete(
            routing_messages(request), schemas.ROUTING, lambda: schemas.routing_schema(labels)
        )

    async def _complete(
        self, messages: list[dict[str, str]], name: str, schema: Callable[[], dict[str, Any]]
    ) -> dict[str, Any]:
        if self.response_format == "json_schema":
            answer_format = schemas.response_format(name, schema())
        else:
            answer_format = {"type": "json_object"}
        try:
            answer = await self.endpoint.post_json(
                "/chat/completions",
                {
                    "model": self.model,
                    "messages": messages,
                    "temperature": 0,
                    "response_format": answer_format,
                },
            )
        except ProviderRefused as refusal:
            if self.response_format == "json_schema" and refuses_the_format(refusal):
                raise ResponseFormatRefused(
                    f"the endpoint at {self.endpoint.base_url} does not accept response_format "
                    f"json_schema (it answered {refusal.status}: {refusal.detail}); set [mind] "
                    'response_format = "json_object" in config.toml',
                    status=refusal.status,
                    detail=refusal.detail,
                ) from refusal
            raise
        return chat_json(answer)

    async def aclose(self) -> None:
        """Close the endpoint. Safe to call more than once."""
        await self.endpoint.aclose()
