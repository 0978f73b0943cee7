"""The answer schemas the http mind sends (``minds.schema``) against the checks they are built
from (``write.validation``, ``write.routing``): an answer at the schema's limits passes the
checks, one past a limit they share is refused by both, and the enums are the checks' sets.

Answers are judged against a schema by a real JSON Schema validator (``jsonschema_rs``), the
way a server that enforces the schema reads it.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema_rs
import pytest

from openai_server import strict_schema_problem
from persona_memory import ids
from persona_memory.minds.schema import extraction_schema, routing_schema
from persona_memory.rows import IMPORTANCE_HIGHEST, IMPORTANCE_LOWEST, KINDS, TEXT_LIMIT
from persona_memory.write.routing import Event, RoutingRefused, interpret
from persona_memory.write.validation import Candidate, SliceFacts, check_candidates

FACTS = SliceFacts(
    persona="warren",
    line_speakers={101: "u:42", 102: "warren", 103: "u:42"},
    writable=frozenset({42}),
    importance_min=IMPORTANCE_LOWEST,
)


def sentence(length: int) -> str:
    """One plain sentence about u:42 of exactly ``length`` characters."""
    words = "u:42 keeps a small allotment by the canal where she grows beans"
    while len(words) < length:
        words += " and leeks"
    body = words[: length - 1]
    return (body[:-1] + "s" if body.endswith(" ") else body) + "."


def memory(**fields: Any) -> dict[str, Any]:
    base = {"subject": "u:42", "counterpart": None, "kind": "fact", "text": "u:42 keeps bees.",
            "importance": 5, "valid_from": None, "evidence": [101]}
    return {**base, **fields}


def fits(schema: dict[str, Any], answer: object) -> bool:
    return jsonschema_rs.validator_for(schema).is_valid(answer)


def kept(*memories: dict[str, Any]) -> tuple[list[Candidate], list[str]]:
    candidates, dropped = check_candidates({"memories": list(memories)}, FACTS)
    return candidates, [d.reason for d in dropped]


def test_the_schemas_enums_are_the_checks_own_sets() -> None:
    item = extraction_schema()["properties"]["memories"]["items"]["properties"]
    assert item["kind"]["enum"] == list(KINDS)
    assert (item["importance"]["minimum"], item["importance"]["maximum"]) == (IMPORTANCE_LOWEST, IMPORTANCE_HIGHEST)
    route = routing_schema(["0", "1"])["properties"]
    assert set(route["event"]["enum"]) == {event.value for event in Event}
    assert route["old_id"]["anyOf"][0]["enum"] == ["0", "1"]


def test_an_answer_at_the_schemas_limits_passes_validation() -> None:
    longest = sentence(TEXT_LIMIT)
    assert len(longest) == TEXT_LIMIT
    answer = {"memories": [
        memory(kind=KINDS[0], text=longest, importance=IMPORTANCE_HIGHEST, valid_from="2026-12-31"),
        memory(subject=ids.SELF, counterpart="u:42", kind="promise", importance=IMPORTANCE_LOWEST,
               text="Warren promised u:42 to send the shareholder letter.", evidence=[102],
               valid_from="2026"),
        memory(subject=ids.WORLD, kind="event", text="The canal lock reopened in spring.",
               evidence=[101, 103], valid_from="2026-04"),
        *(memory(kind=kind, text=f"u:42 said something of the {kind} sort, number {i}.")
          for i, kind in enumerate(KINDS)),
    ]}
    assert fits(extraction_schema(), answer)
    candidates, dropped = kept(*answer["memories"])
    assert dropped == []
    assert [c.kind for c in candidates] == [KINDS[0], "promise", "event", *KINDS]
    assert candidates[0].text == longest and candidates[0].importance == IMPORTANCE_HIGHEST
    assert candidates[1].counterpart == "u:42" and candidates[1].importance == IMPORTANCE_LOWEST
    assert [c.valid_from for c in candidates[:3]] == ["2026-12-31", "2026", "2026-04"]
    assert fits(extraction_schema(), {"memories": []})


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"text": sentence(TEXT_LIMIT + 1)}, f"the limit is {TEXT_LIMIT}"),
        ({"text": ""}, "non-empty sentence"),
        ({"importance": IMPORTANCE_LOWEST - 1}, "is not an int from"),
        ({"importance": IMPORTANCE_HIGHEST + 1}, "is not an int from"),
        ({"importance": 5.5}, "is not an int from"),
        ({"kind": "opinion"}, "is not one of"),
        ({"subject": "Dan"}, "is not 'world', 'self' or a u: id"),
        ({"subject": "u:0"}, "is not 'world', 'self' or a u: id"),
        ({"subject": "u:042"}, "is not 'world', 'self' or a u: id"),
        ({"subject": ids.SELF, "counterpart": "Dan", "evidence": [102]}, "needs a counterpart"),
        ({"valid_from": "2026-13"}, "is not a date"),
        ({"valid_from": "last July"}, "is not a date"),
        ({"evidence": []}, "non-empty list of line ids"),
        ({"evidence": ["101"]}, "is not a line of this slice"),
    ],
    ids=["text-too-long", "text-empty", "importance-low", "importance-high", "importance-float",
         "kind", "subject-name", "subject-zero", "subject-leading-zero", "counterpart-name",
         "month-13", "date-in-words", "no-evidence", "evidence-string"],
)
def test_past_a_limit_the_schema_and_the_checks_both_refuse(fields: dict[str, Any], reason: str) -> None:
    wrong = memory(**fields)
    assert not fits(extraction_schema(), {"memories": [wrong]})
    candidates, dropped = kept(wrong)
    assert candidates == []
    assert len(dropped) == 1 and reason in dropped[0]


def test_what_only_the_checks_tie_together() -> None:
    """A strict schema cannot make one field depend on another: a ``self`` memory without its
    counterpart fits the schema, and validation drops it."""
    lonely = memory(subject=ids.SELF, counterpart=None, evidence=[102])
    assert fits(extraction_schema(), {"memories": [lonely]})
    assert kept(lonely) == ([], ["a self memory needs a counterpart present in the room, got None"])


@pytest.mark.parametrize(
    "subject",
    ["world", "self", "u:1", "u:42", "u:" + "9" * 18, "u:" + "1" * 19, "u:0", "u:01", "u:", "u:42 ",
     " u:42", "U:42", "World", "Dan", "u:4\u0662"],
)
def test_the_subject_pattern_is_the_id_rule(subject: str) -> None:
    """The schema's subject pattern accepts exactly the forms ``ids`` reads."""
    answer = {"memories": [memory(subject=subject)]}
    readable = subject in (ids.WORLD, ids.SELF) or ids.parse_user_ref(subject) is not None
    assert fits(extraction_schema(), answer) == readable


def test_a_routing_answer_in_the_schema_is_interpreted() -> None:
    offered = ["row zero", "row one"]  # interpret only indexes the rows it was offered
    candidate = Candidate(subject="u:42", kind="fact", text="u:42 keeps bees.", importance=5, evidence=(101,))
    schema = routing_schema(["0", "1"])
    for answer, event, target in [
        ({"event": "UPDATE", "old_id": "1"}, Event.UPDATE, "row one"),
        ({"event": "CLOSE", "old_id": "0"}, Event.CLOSE, "row zero"),
        ({"event": "ADD", "old_id": None}, Event.ADD, None),
        ({"event": "NONE", "old_id": None}, Event.NONE, None),
    ]:
        assert fits(schema, answer)
        decision = interpret(answer, candidate, offered)  # type: ignore[arg-type]
        assert (decision.event, decision.target) == (event, target)
    for answer in [{"event": "UPDATE", "old_id": "2"}, {"event": "DELETE", "old_id": "0"},
                   {"event": "UPDATE", "old_id": None}]:
        with pytest.raises(RoutingRefused):
            interpret(answer, candidate, offered)  # type: ignore[arg-type]
    assert not fits(schema, {"event": "UPDATE", "old_id": "2"})
    assert not fits(schema, {"event": "DELETE", "old_id": "0"})
    # a schema cannot tie old_id to the event: that one is the routing check's alone
    assert fits(schema, {"event": "UPDATE", "old_id": None})
    assert not fits(routing_schema([]), {"event": "UPDATE", "old_id": "0"})
    assert fits(routing_schema([]), {"event": "ADD", "old_id": None})


@pytest.mark.parametrize("schema", [extraction_schema(), routing_schema([]), routing_schema(["0"]),
                                    routing_schema([str(i) for i in range(10)])],
                         ids=["extraction", "routing-none", "routing-one", "routing-ten"])
def test_the_schemas_are_json_schema_in_openais_strict_subset(schema: dict[str, Any]) -> None:
    assert jsonschema_rs.meta.is_valid(schema)
    assert strict_schema_problem(schema) is None


def _patterns(node: object) -> list[str]:
    if isinstance(node, dict):
        return ([node["pattern"]] if "pattern" in node else []) + [p for v in node.values() for p in _patterns(v)]
    if isinstance(node, list):
        return [p for v in node for p in _patterns(v)]
    return []


def test_the_patterns_are_read_alike_by_every_server() -> None:
    """Anchored, no group with ``?`` and no ``\\d``/``\\w``/``\\s``: llama.cpp's converter turns a
    pattern into a grammar by hand and reads none of those; Python reads them as written."""
    patterns = _patterns(extraction_schema())
    assert len(patterns) == 4
    for pattern in patterns:
        assert pattern.startswith("^") and pattern.endswith("$"), pattern
        assert not re.search(r"\(\?|\\[dwsDWS]", pattern), pattern
        re.compile(pattern)


@pytest.mark.parametrize("text", ['u:42 loves the film "Heat".', "u:42 saves to C:\\music.",
                                  "u:42 keeps bees.\nu:42 sells honey.", "u:42 keeps\tbees."])
def test_the_text_is_written_without_escapes(text: str) -> None:
    """A quote, a backslash or a control character would be escaped in JSON, and servers that
    match the pattern against the JSON they write would count and close the string
    differently: the schema keeps them out, though validation would take most of them."""
    assert not fits(extraction_schema(), {"memories": [memory(text=text)]})
    assert fits(extraction_schema(), {"memories": [memory(text="u:42 loves the film 'Heat', près du canal.")]})
