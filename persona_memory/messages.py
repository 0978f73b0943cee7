"""The room events the chat runtime sends: a closed family of frozen facts.

Rules:
- Each message is an ``@attrs.frozen`` class named in the past tense; ``RoomEvent`` is their
  closed union and every consumer dispatches with ``match`` ending in ``assert_never``.
- A message is checked when it is built: a bad field raises ``InvalidInput`` (a ``ValueError``)
  naming the field, so nothing malformed ever reaches a mailbox.
- A private chat is one persona and one human.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

import attrs

from . import ids
from .errors import InvalidInput


def _room_id(_inst: object, attr: attrs.Attribute, value: object) -> None:
    ids.check_room_id(value, attr.name)


def _user_id(_inst: object, attr: attrs.Attribute, value: object) -> None:
    ids.check_user_id(value, attr.name)


def _personas(value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        raise InvalidInput(f"personas must be a tuple of persona slugs, got {value!r}")
    personas = tuple(value)  # type: ignore[arg-type]
    if not personas:
        raise InvalidInput("personas must name at least one persona")
    for slug in personas:
        ids.check_persona(slug, "personas")
    if len(set(personas)) != len(personas):
        raise InvalidInput(f"personas must not repeat a persona, got {personas!r}")
    return personas


def _humans(value: object) -> frozenset[int]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise InvalidInput(f"humans must be a set of positive int user ids, got {value!r}")
    humans = frozenset(value)  # type: ignore[arg-type]
    for uid in humans:
        ids.check_user_id(uid, "humans")
    return humans


def _names(value: object) -> Mapping[int, str]:
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping):
        raise InvalidInput(f"names must map user ids to display names, got {value!r}")
    for uid, name in value.items():
        ids.check_user_id(uid, "names")
        if not isinstance(name, str) or not name.strip() or len(name) > 100:
            raise InvalidInput(f"names[{uid}] must be a display name of 1..100 chars, got {name!r}")
        ids.check_unicode(name, f"names[{uid}]")
    return MappingProxyType(dict(value))


def _optional_text(limit: int):
    def check(_inst: object, attr: attrs.Attribute, value: object) -> None:
        if value is None:
            return
        if not isinstance(value, str) or not value.strip() or len(value) > limit:
            raise InvalidInput(
                f"{attr.name} must be None or a non-empty string of at most {limit} chars, "
                f"got {value!r}"
            )
        ids.check_unicode(value, attr.name)

    return check


def _bool(_inst: object, attr: attrs.Attribute, value: object) -> None:
    if not isinstance(value, bool):
        raise InvalidInput(f"{attr.name} must be True or False, got {value!r}")


@attrs.frozen
class RoomOpened:
    """A room opened with these personas and humans in it.

    ``private``: a private chat (exactly one persona and one human). ``incognito``: the room
    neither reads nor writes memories. ``kit``: the mounted game or role-play, if any — such a
    room is never written from. ``topic``: the opener that relevance is measured against
    (``None``: relevance is 0). ``names``: current display names, used only when rendering.
    ``title``: what the human's page calls the room ("Book club"); ``None``: "a private chat
    with Warren" or "a group chat".
    """

    room_id: str = attrs.field(validator=_room_id)
    personas: tuple[str, ...] = attrs.field(converter=_personas)
    humans: frozenset[int] = attrs.field(converter=_humans)
    private: bool = attrs.field(default=False, validator=_bool)
    incognito: bool = attrs.field(default=False, validator=_bool)
    kit: str | None = attrs.field(default=None, validator=_optional_text(200))
    topic: str | None = attrs.field(default=None, validator=_optional_text(2000))
    names: Mapping[int, str] = attrs.field(factory=dict, converter=_names, eq=False)
    title: str | None = attrs.field(default=None, validator=_optional_text(200))

    def __attrs_post_init__(self) -> None:
        if self.private and (len(self.personas) != 1 or len(self.humans) != 1):
            raise InvalidInput(
                f"a private chat has exactly one persona and one human; room {self.room_id!r} "
                f"has personas {self.personas!r} and humans {sorted(self.humans)!r} "
                "(open it with private=False for a group room)"
            )


@attrs.frozen
class MemberJoined:
    """A human joined an open room."""

    room_id: str = attrs.field(validator=_room_id)
    user_id: int = attrs.field(validator=_user_id)


@attrs.frozen
class MemberLeft:
    """A human left an open room."""

    room_id: str = attrs.field(validator=_room_id)
    user_id: int = attrs.field(validator=_user_id)


@attrs.frozen
class RoomWentQuiet:
    """The room went quiet: the debounce that queues the write path for its personas."""

    room_id: str = attrs.field(validator=_room_id)


@attrs.frozen
class RoomArchived:
    """The room is archived: flush its writes, then forget its cached blocks."""

    room_id: str = attrs.field(validator=_room_id)


RoomEvent = RoomOpened | MemberJoined | MemberLeft | RoomWentQuiet | RoomArchived
