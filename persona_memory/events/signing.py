"""How a webhook's body is signed, and how its receiver checks it.

Rules:
- The signature is HMAC-SHA256, keyed by the webhook's secret, over ``<timestamp>.<raw body>``
  (the timestamp in whole seconds since the epoch, as sent in ``TIMESTAMP_HEADER``), written
  ``sha256=<hex>`` in ``SIGNATURE_HEADER``. Signing the timestamp with the body lets a
  receiver refuse a delivery replayed long after it was made.
- ``EVENT_ID_HEADER`` carries the event id: the idempotency key. A retried or re-delivered
  event carries the same id, so a receiver that saw it already can skip it.
- Pure: bytes in, strings out.
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Persona-Memory-Signature"
TIMESTAMP_HEADER = "X-Persona-Memory-Timestamp"
EVENT_ID_HEADER = "X-Persona-Memory-Event-Id"
KIND_HEADER = "X-Persona-Memory-Event"


def signature(secret: bytes, timestamp: int, body: bytes) -> str:
    """The ``SIGNATURE_HEADER`` value for ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret, f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def verify(secret: bytes, timestamp: str, signed: str, body: bytes, *, now: float, tolerance: float = 300.0) -> bool:
    """Whether ``signed`` is ``body``'s signature at ``timestamp`` (the two headers as
    received) and the timestamp is within ``tolerance`` seconds of ``now``."""
    try:
        when = int(timestamp)
    except ValueError:
        return False
    if abs(now - when) > tolerance:
        return False
    return hmac.compare_digest(signature(secret, when, body), signed)
