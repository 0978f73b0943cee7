"""The reads for the human's page that join table families (design §5): which personas a user
has to do with — through rows about them, a room they shared, or a mute. A function of a
connection (either backend's: see ``store``), run inside the caller's unit of work; the store
runs it (``Store.personas_for``). What reads or deletes one family lives in that family's
repository (``memories``, ``rooms``, ``names``, ``transcript``).

Rules:
- Every query is scoped to one user: a row is theirs when its subject is ``u:<id>`` or it is a
  ``self`` row whose counterpart is ``u:<id>``.
"""

from __future__ import annotations

import sqlite3

from ..ids import user_ref
from .dialect import dialect_of


def personas_for(conn: sqlite3.Connection, user_id: int) -> list[str]:
    """Personas that hold rows about the user, shared a room with them, or were muted by them."""
    ref = user_ref(user_id)
    found = {
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT persona FROM persona_memory WHERE subject = ? OR counterpart = ?", (ref, ref)
        )
    }
    dialect = dialect_of(conn)
    found |= {
        r[0]
        for r in conn.execute(
            f"SELECT DISTINCT p.value FROM rooms, {dialect.items_of('rooms.personas', 'p')} "
            f"WHERE {dialect.holds('rooms.humans')}",
            (user_id,),
        )
    }
    found |= {
        r[0] for r in conn.execute("SELECT persona FROM persona_memory_mute WHERE user_id = ?", (user_id,))
    }
    return sorted(found)
