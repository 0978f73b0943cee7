"""A call forwarded to the worker that owns a persona: one HTTP hop to its cluster routes
(``web/cluster_routes.py``), and the human's edits as JSON.

Rules:
- A forward is a ``POST {address}/cluster/{what}`` with the runtime token; the owner answers
  JSON, or ``421`` when it does not own the persona now (``Misdirected``: ask again), or one of
  the runtime API's error statuses, raised here as the facade's error (``client.error_of``).
- A transport failure is ``httpx.TransportError``: the owner may be dead; the caller asks
  again once the leases say who owns the persona.
- The human's edits travel as ``{"edit": "delete" | "undo" | "clear", "user_id": …, "id": …}``
  and come back as ``{"result": …}``: ``null`` for a delete, the ids an undo deleted, how many
  rows a clear deleted (``edit_answer``).
"""

from __future__ import annotations

from typing import Any

import httpx

from ..actors.lane import ClearMemories, DeleteMemory, HumanEdit, UndoNotice
from ..client import error_of
from ..errors import InvalidInput, PersonaMemoryError

MISDIRECTED = 421
"""The status an owner answers a forwarded call with when it does not own the persona now."""


class Misdirected(PersonaMemoryError):
    """The worker asked does not own the persona now."""


async def forward(http: httpx.AsyncClient, token: str, address: str, what: str, body: dict[str, Any]) -> Any:
    """The owner's JSON answer to ``what`` (see the rules)."""
    response = await http.post(
        f"{address.rstrip('/')}/cluster/{what}", json=body, headers={"authorization": f"Bearer {token}"}
    )
    if response.status_code == MISDIRECTED:
        raise Misdirected(response.json().get("error", "misdirected"))
    if response.is_success:
        return response.json()
    raise error_of(response)


def edit_body(edit: HumanEdit) -> dict[str, Any]:
    match edit:
        case DeleteMemory(user_id=user_id, memory_id=memory_id):
            return {"edit": "delete", "user_id": user_id, "id": memory_id}
        case UndoNotice(user_id=user_id, notice_id=notice_id):
            return {"edit": "undo", "user_id": user_id, "id": notice_id}
        case ClearMemories(user_id=user_id):
            return {"edit": "clear", "user_id": user_id, "id": None}
    raise AssertionError(f"unknown edit {edit!r}")


def edit_answer(edit: HumanEdit, result: object) -> Any:
    """What a forwarded edit answers, as JSON: the facade reads nothing of a delete's result
    (the row deleted stays on the owner), an undo's ids, a clear's count."""
    if isinstance(edit, DeleteMemory):
        return None
    return result


def edit_of(body: Any) -> HumanEdit:
    """The edit a forwarded body describes; ``InvalidInput`` for anything else."""
    if isinstance(body, dict) and isinstance(body.get("user_id"), int) and not isinstance(body["user_id"], bool):
        kind, user_id, ident = body.get("edit"), body["user_id"], body.get("id")
        if kind == "clear" and ident is None:
            return ClearMemories(user_id)
        if isinstance(ident, int) and not isinstance(ident, bool):
            if kind == "delete":
                return DeleteMemory(user_id, ident)
            if kind == "undo":
                return UndoNotice(user_id, ident)
    raise InvalidInput('an edit is {"edit": "delete" | "undo" | "clear", "user_id": int, "id": int or null}')
