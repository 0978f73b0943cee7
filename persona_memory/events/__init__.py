"""Events: what changed, told to the runtime — kept in the outbox (``storage/outbox.py``),
pushed to webhooks (``webhooks.py``) and streamed at ``GET /api/events`` (``web/event_stream.py``)."""

from .kinds import (
    KINDS,
    ControlsChanged,
    Delivered,
    Event,
    MemoryClosed,
    MemoryDeleted,
    MemoryNoted,
    NoticeUndone,
)
from .signing import EVENT_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signature, verify

__all__ = [
    "EVENT_ID_HEADER",
    "KINDS",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "ControlsChanged",
    "Delivered",
    "Event",
    "MemoryClosed",
    "MemoryDeleted",
    "MemoryNoted",
    "NoticeUndone",
    "signature",
    "verify",
]
