"""A scriptable OpenAI-compatible HTTP/1.1 server on loopback, for testing the HTTP providers.

It is a real server (trio sockets, h11 for the protocol) on ``127.0.0.1`` and an ephemeral
port, speaking just enough of the protocol: ``POST /v1/chat/completions`` and
``POST /v1/embeddings``. Every request is recorded (method, path, headers, JSON body) so a test
can check what the client sent. Each path answers from its script, first in first out; with the
script empty it answers normally: a chat completion whose content is ``{"memories": []}``, or
feature-hashing embeddings of the inputs (``HashingEmbedder``, in ``dimensions`` or 8
dimensions).

Usage::

    async with open_openai_server() as server:
        server.script(CHAT, status_reply(429, retry_after="0"), chat_json_reply({...}))
        ... point a client at server.base_url ...
        assert len(server.requests_to(CHAT)) == 2

A ``Reply`` with a ``delay`` waits before answering: longer than the client's timeout, it is a
hang. ``max_in_flight`` is the most requests the server held at once (from the moment a request
was fully read to the moment its answer began), to check a client's concurrency limit.

A chat request's ``response_format`` is read before anything is answered, as OpenAI reads it:
``{"type": "json_schema", ...}`` is refused with a 400 when the server was opened with
``json_schema=False`` (a model that cannot constrain its output), and otherwise when its
schema is not valid JSON Schema or leaves OpenAI's strict subset (``strict_schema_problem``).
A refused request takes nothing from the script. What the server answers is the script's
word, schema or not: servers that ignore the schema exist, and a cut-off answer breaks any.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import attrs
import h11
import jsonschema_rs
import trio

from persona_memory.embedding import HashingEmbedder

CHAT = "/v1/chat/completions"
EMBEDDINGS = "/v1/embeddings"


@attrs.frozen
class Reply:
    """One scripted answer: status, body bytes, extra headers, and a wait before answering."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    content_type: str = "application/json"


@attrs.frozen
class Received:
    """One request as the server read it. ``body`` is the parsed JSON, or the raw bytes."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def json_reply(obj: Any, status: int = 200, headers: Sequence[tuple[str, str]] = ()) -> Reply:
    return Reply(status=status, body=json.dumps(obj).encode(), headers=tuple(headers))


def chat_reply(content: str | None, finish_reason: str = "stop", **message: Any) -> Reply:
    """A chat completion whose first choice carries ``content``."""
    return json_reply(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": "test-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, **message},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
    )


def chat_json_reply(obj: Any) -> Reply:
    """A chat completion whose content is ``obj`` as JSON text."""
    return chat_reply(json.dumps(obj))


def embeddings_reply(vectors: Sequence[Sequence[float]], indexes: Sequence[int] | None = None) -> Reply:
    """An embeddings answer: ``vectors`` in the order given, numbered by ``indexes``."""
    numbers = list(range(len(vectors))) if indexes is None else list(indexes)
    return json_reply(
        {
            "object": "list",
            "model": "test-embed",
            "data": [
                {"object": "embedding", "index": i, "embedding": list(v)}
                for i, v in zip(numbers, vectors)
            ],
            "usage": {"prompt_tokens": 3, "total_tokens": 3},
        }
    )


def status_reply(status: int, message: str = "scripted failure", retry_after: str | None = None) -> Reply:
    """An error in OpenAI's shape, optionally with a ``Retry-After`` header."""
    headers = (("retry-after", retry_after),) if retry_after is not None else ()
    return json_reply(
        {"error": {"message": message, "type": "test_error", "code": None}},
        status=status,
        headers=headers,
    )


def raw_reply(body: bytes, status: int = 200, content_type: str = "application/json") -> Reply:
    """Exactly these body bytes (for malformed JSON and the like)."""
    return Reply(status=status, body=body, content_type=content_type)


def hang(seconds: float, then: Reply | None = None) -> Reply:
    """Wait ``seconds`` before answering (with ``then``, or a normal-looking empty answer)."""
    return attrs.evolve(then or chat_json_reply({"memories": []}), delay=seconds)


_ANNOTATIONS = {"description", "title"}
_STRICT_KEYWORDS: dict[str, set[str]] = {
    "object": {"type", "properties", "required", "additionalProperties"},
    "array": {"type", "items", "minItems", "maxItems"},
    "string": {"type", "enum", "const", "pattern", "format"},
    "integer": {"type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
    "number": {"type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
    "boolean": {"type", "enum", "const"},
    "null": {"type"},
}


def strict_schema_problem(schema: Any, path: str = "#") -> str | None:
    """Why OpenAI's strict mode would refuse ``schema``, or ``None``: the root is an object;
    every object requires all of its properties and allows no others; a node is a ``type``
    (or a list of types) or an ``anyOf`` below the root; only the keywords its type allows
    (no ``maxLength``, ``minLength``, ``oneOf``, ``default``...)."""
    if not isinstance(schema, dict):
        return f"{path} is not a schema object"
    if "anyOf" in schema:
        if path == "#":
            return "the root schema must not be an anyOf"
        if set(schema) - {"anyOf"} - _ANNOTATIONS:
            return f"{path}: an anyOf takes no other keyword"
        for i, option in enumerate(schema["anyOf"]):
            if (problem := strict_schema_problem(option, f"{path}/anyOf/{i}")) is not None:
                return problem
        return None
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if not kinds or any(k not in _STRICT_KEYWORDS for k in kinds):
        return f"{path}: type {schema.get('type')!r} is not one strict mode supports"
    if path == "#" and kinds != ["object"]:
        return "the root schema must be an object"
    allowed = set().union(*(_STRICT_KEYWORDS[k] for k in kinds)) | _ANNOTATIONS
    if extra := sorted(set(schema) - allowed):
        return f"{path}: {extra[0]!r} is not permitted"
    if "object" in kinds:
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            return f"{path}: additionalProperties must be false"
        if sorted(schema.get("required", [])) != sorted(properties):
            return f"{path}: every property must be required"
        for name, sub in properties.items():
            if (problem := strict_schema_problem(sub, f"{path}/properties/{name}")) is not None:
                return problem
    if "array" in kinds:
        return strict_schema_problem(schema.get("items"), f"{path}/items")
    return None


def _format_refusal(request: Received, json_schema: bool) -> Reply | None:
    """The 400 a chat request's ``response_format`` earns, or ``None`` when it is acceptable."""
    body = request.body if isinstance(request.body, dict) else {}
    wanted = body.get("response_format")
    if request.path != CHAT or not isinstance(wanted, dict) or wanted.get("type") != "json_schema":
        return None
    if not json_schema:
        return status_reply(
            400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported by this model."
        )
    spec = wanted.get("json_schema") or {}
    schema = spec.get("schema")
    problem = None if jsonschema_rs.meta.is_valid(schema) else "it is not valid JSON Schema"
    if problem is None and spec.get("strict"):
        problem = strict_schema_problem(schema)
    if problem is None:
        return None
    return status_reply(400, f"Invalid schema for response_format {spec.get('name')!r}: {problem}.")


class OpenAIServer:
    """The server's state: scripts, the requests received, and the in-flight count.

    ``json_schema``: whether its model can be held to a JSON schema (see the module).
    """

    def __init__(self, *, json_schema: bool = True) -> None:
        self.json_schema = json_schema
        self.port = 0
        self.received: list[Received] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._scripts: defaultdict[str, deque[Reply]] = defaultdict(deque)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, path: str, *replies: Reply) -> None:
        """Queue ``replies`` for the next requests to ``path``, in order."""
        self._scripts[path].extend(replies)

    def requests_to(self, path: str) -> list[Received]:
        return [r for r in self.received if r.path == path]

    def _answer(self, request: Received) -> Reply:
        refusal = _format_refusal(request, self.json_schema)
        if refusal is not None:
            return refusal
        queue = self._scripts[request.path]
        if queue:
            return queue.popleft()
        if request.method != "POST":
            return status_reply(405, f"{request.method} not allowed")
        if request.path == CHAT:
            return chat_json_reply({"memories": []})
        if request.path == EMBEDDINGS and isinstance(request.body, dict):
            inputs = request.body.get("input", [])
            inputs = [inputs] if isinstance(inputs, str) else inputs
            dim = request.body.get("dimensions", 8)
            return embeddings_reply(HashingEmbedder(dim).embed_sync(inputs).tolist())
        return status_reply(404, f"no route for {request.path}")

    async def serve_connection(self, stream: trio.SocketStream) -> None:
        """Answer requests on one connection until the client closes it."""
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                request = await _read_request(conn, stream)
                if request is None:
                    return
                self.received.append(request)
                reply = self._answer(request)
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
                try:
                    await trio.sleep(reply.delay)
                finally:
                    self.in_flight -= 1
                await _send_reply(conn, stream, reply)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError):
            return
        finally:
            await stream.aclose()


async def _next_event(conn: h11.Connection, stream: trio.SocketStream) -> Any:
    while True:
        event = conn.next_event()
        if event is not h11.NEED_DATA:
            return event
        conn.receive_data(await stream.receive_some(65536))


async def _read_request(conn: h11.Connection, stream: trio.SocketStream) -> Received | None:
    event = await _next_event(conn, stream)
    if isinstance(event, h11.ConnectionClosed):
        return None
    assert isinstance(event, h11.Request), event
    body = bytearray()
    while not isinstance(part := await _next_event(conn, stream), h11.EndOfMessage):
        assert isinstance(part, h11.Data), part
        body += part.data
    try:
        parsed: Any = json.loads(body) if body else None
    except ValueError:
        parsed = bytes(body)
    return Received(
        method=event.method.decode(),
        path=event.target.decode(),
        headers={k.decode().lower(): v.decode() for k, v in event.headers},
        body=parsed,
    )


async def _send_reply(conn: h11.Connection, stream: trio.SocketStream, reply: Reply) -> None:
    headers = [
        ("content-type", reply.content_type),
        ("content-length", str(len(reply.body))),
        *reply.headers,
    ]
    out = conn.send(h11.Response(status_code=reply.status, headers=headers))
    out += conn.send(h11.Data(data=reply.body)) or b""
    out += conn.send(h11.EndOfMessage()) or b""
    await stream.send_all(out)


@asynccontextmanager
async def open_openai_server(*, json_schema: bool = True) -> AsyncIterator[OpenAIServer]:
    """Serve on ``127.0.0.1`` (an ephemeral port) until the block ends."""
    server = OpenAIServer(json_schema=json_schema)
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            partial(trio.serve_tcp, server.serve_connection, 0, host="127.0.0.1")
        )
        server.port = listeners[0].socket.getsockname()[1]
        try:
            yield server
        finally:
            nursery.cancel_scope.cancel()
