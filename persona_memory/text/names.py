"""How a person's display name is found in a text. Pure.

The guards find the names of other users in a row with it and write a subject's own name as
its id (``write.guards``); the offline reader finds the names of the people in a room with it
(``minds.offline.sentences``); an order addressed to the persona by its name is read with it
(``text.orders``).
"""

from __future__ import annotations

import functools
import re

from .stopwords import STOPWORDS


@functools.lru_cache(maxsize=4096)
def name_regex(name: str) -> re.Pattern[str]:
    """How a display name (or one word of it) is found in a text: as a whole word, in any case —
    except a name that is also a common word ("Will", "May", "Hope"), found only capitalised.

    Cached per name: ``re``'s own cache (512 patterns, oldest out first) is shared by every
    slice in flight, and a hundred personas' names overran it, so each sentence compiled its
    names again (a third of the offline reader's time in the write benchmark)."""
    if name.casefold() in STOPWORDS or name.casefold() in _WORD_NAMES:
        return re.compile(rf"(?<![\w:]){re.escape(name[:1].upper() + name[1:])}(?!\w)")
    return re.compile(rf"(?<![\w:]){re.escape(name)}(?!\w)", re.IGNORECASE)


_WORD_NAMES = frozenset(
    """will may mark bill rose grace hope joy faith frank june april august summer autumn dawn sky
    rich jack art chase pat sue bob max ray ruby pearl amber iris lily daisy holly ivy rob don
    gene guy victor major nick drew wade reed cliff glen dale rock sunny honey angel""".split()
)
