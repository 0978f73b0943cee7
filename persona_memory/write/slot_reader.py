"""The slot reader port: which slots a memory sentence fills, as routing asks it. Pure.

Beside the rows whose vectors are close to a candidate, routing offers the router the open
rows of the same subject that fill a slot the candidate fills — a thing a person holds one
value of at a time, such as where they work or where they live — however unlike the two
sentences are (``write.routing``, ``write.route_index``). Which slot a sentence fills is a
matter of its language, not of routing, so routing asks a ``SlotReader``. The composition root
(``compose.make_slot_reader``) picks the one for every mind, HTTP ones included: the offline
reader's English grammar (``minds.offline.slots.EnglishSlots``).

The contract every implementation keeps:

``slots(text)``
    The slots ``text`` fills — a third-person memory sentence about a human, "u:42 now works
    at Globex." — each once, in the order the sentence says them; ``()`` when it fills none.
    A slot is a hashable value that equals another sentence's slot exactly when the two give
    the same thing a value (where u:42 works: "works at Acme" and "works at Globex" fill one
    slot, with two values). Deterministic: the route index keys its rows by these slots when
    it is built and looks a candidate's up later, so a text gives the same slots every time.

``SlotsGiven`` is the fake: the slots a test names for each text.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Protocol

from ..errors import InvalidInput


class SlotReader(Protocol):
    """Which slots a memory sentence fills. See the module docstring."""

    def slots(self, text: str) -> tuple[Hashable, ...]:
        """The slots ``text`` fills, each once, in the order it says them."""
        ...


class SlotsGiven:
    """A ``SlotReader`` that reads nothing: ``given`` names the slots of each text (any
    hashable values); any other text fills none.

    Raises:
        InvalidInput: a text's slots are a string, not a sequence of slots, or a slot is not
            hashable.
    """

    __slots__ = ("_given",)

    def __init__(self, given: Mapping[str, Iterable[Hashable]] | None = None) -> None:
        table: dict[str, tuple[Hashable, ...]] = {}
        for text, slots in (given or {}).items():
            if isinstance(slots, str):
                raise InvalidInput(
                    f"SlotsGiven: the slots of {text!r} are a sequence of slots; got the string {slots!r} "
                    f"(write ({slots!r},) for one slot)"
                )
            found: list[Hashable] = []
            for slot in slots:
                if not isinstance(slot, Hashable):
                    raise InvalidInput(f"SlotsGiven: a slot is a hashable value; {text!r} has {slot!r}")
                if slot not in found:
                    found.append(slot)
            table[text] = tuple(found)
        self._given = table

    def slots(self, text: str) -> tuple[Hashable, ...]:
        return self._given.get(text, ())
