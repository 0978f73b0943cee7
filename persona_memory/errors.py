"""Every error persona-memory raises on purpose, sorted by whose fault it was.

::

    PersonaMemoryError                  base of everything below
    ├── InvalidInput (ValueError)       the caller's: bad argument or message. Nothing changed.
    │   ├── UnknownRoom                 a message or query names a room that is not open
    │   ├── NotInRoom                   a persona or human named is not in that room
    │   ├── NotYourMemory               a human tried to delete a row that is not about them
    │   └── NotYourNotice               a human tried to undo a notice that is not theirs
    ├── ConfigError (ValueError)        config.toml or an override is wrong; says which key
    ├── StorageError                    SQLite broke, or the file is not ours
    │   └── ForeignDatabase             the file at storage.path is corrupt or another program's
    ├── ProviderError                   a model or embedding endpoint broke or answered nonsense
    │   ├── EmbedderUnavailable         the embedder could not be loaded or reached
    │   ├── ProviderUnreachable         timeouts, 429s or 5xx outlasted the retries (try later)
    │   │   └── ReaderProcessDied       the offline reader's worker process died on a slice
    │   ├── ProviderRefused             the endpoint said no (401, 403, 404, 400): fix the config
    │   │   ├── ProviderInputTooLong    the request was too long for the model: send less
    │   │   └── ResponseFormatRefused   the endpoint does not take [mind] response_format: change it
    │   └── ProviderNonsense            the answer was not the JSON we asked for
    ├── LeaseLost                       this worker no longer owns the persona: nothing committed
    ├── WriterCrashedTooOften           a persona's actor or writer crashed past the restart intensity
    ├── PersonaFailed                   that persona was stopped; its calls raise this (others go on)
    ├── MemoryClosed                    the memory was shut down; the call came too late
    └── NotOnTrio (RuntimeError)        open_memory was entered outside trio: use open_memory_in_asyncio

``InvalidInput`` and ``ConfigError`` subclass ``ValueError`` so callers that only know the API
contract ("bad input raises ValueError") catch them; their messages say what to change.
"""

from __future__ import annotations


class PersonaMemoryError(Exception):
    """Base class for every error this package raises deliberately."""


class InvalidInput(PersonaMemoryError, ValueError):
    """The caller passed something we cannot accept. Nothing was stored or changed."""


class UnknownRoom(InvalidInput):
    """The room was never opened (or was archived). Send ``RoomOpened`` first."""


class NotInRoom(InvalidInput):
    """The persona or human named is not part of that room right now."""


class NotYourMemory(InvalidInput):
    """A human asked to delete a memory that does not exist or is not about them."""


class NotYourNotice(InvalidInput):
    """A human asked to undo a notice that does not exist, is not theirs, or was undone."""


class ConfigError(PersonaMemoryError, ValueError):
    """A setting is unknown, of the wrong type or out of range. The message names the key."""


class StorageError(PersonaMemoryError):
    """SQLite failed underneath us. Not the caller's fault; the operation did not commit."""


class ForeignDatabase(StorageError):
    """The file at the configured path is corrupt, or belongs to another program.

    We refuse to open it and never write to it.
    """


class ProviderError(PersonaMemoryError):
    """A model or embedding provider failed or answered something we cannot use."""


class EmbedderUnavailable(ProviderError):
    """The embedder could not be loaded (missing weights) or reached."""


class ProviderUnreachable(ProviderError):
    """The endpoint kept failing (timeouts, 429, 5xx) through every retry. Try again later."""


class ReaderProcessDied(ProviderUnreachable):
    """A worker process of the offline reader (``mind.offline_processes``) died while it read a
    slice, on every try. Nothing of the slice was written; the write path parks it and tries
    it again later. Not the caller's fault: the machine ran out of memory, someone killed the
    process, or the reader crashed in C."""


class ProviderRefused(ProviderError):
    """The endpoint refused the request (bad key, unknown model, bad request): fix the config.

    ``status`` is the HTTP status it answered (``None`` when it is not known) and ``detail``
    the endpoint's own explanation, as it gave it (cut short).
    """

    def __init__(self, message: str, *, status: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail


class ProviderInputTooLong(ProviderRefused):
    """The endpoint refused the request as too long for the model (413, or a context-length
    400). The write path splits the slice instead of sending it again unchanged."""


class ResponseFormatRefused(ProviderRefused):
    """The endpoint refused the answer format the mind asked for (``[mind] response_format``):
    a server or model that cannot constrain its output to a JSON schema. The config's fault,
    not the model's: set ``response_format = "json_object"`` for such an endpoint."""


class ProviderNonsense(ProviderError):
    """The endpoint answered, but not with the JSON shape asked for (malformed or truncated)."""


class LeaseLost(PersonaMemoryError):
    """A write carried the epoch of a lease this worker no longer holds (``storage/leases.py``).

    Nobody's bug: the worker was paused or cut off past its lease, and another worker may own
    the persona now. Nothing of the transaction committed. The worker must stop writing for
    the persona; it may write again only after acquiring a new lease (a new epoch).

    ``held`` is the epoch the writer carried; ``current`` the lease's epoch now and ``owner``
    its owner now (``None``: no lease row, or released); ``expired``: the lease at ``held``
    ran out before the write.
    """

    def __init__(self, persona: str, held: int, current: int | None, owner: str | None, *, expired: bool = False) -> None:
        self.persona = persona
        self.held = held
        self.current = current
        self.owner = owner
        self.expired = expired
        if current == held and owner is not None and expired:
            why = "it expired before this write; acquire the lease again (a new epoch) to write"
        elif current is None:
            why = "there is no lease for it"
        elif owner is None:
            why = f"its lease was released at epoch {current}"
        else:
            why = f"the lease is at epoch {current} now, owned by {owner!r}"
        super().__init__(f"lost the lease of persona {persona!r} held at epoch {held}: {why}; nothing was committed")


class NotOwnedHere(LeaseLost):
    """This worker does not hold ``persona``'s lease now (it lost it, handed it over or never
    had it): nothing is written for the persona from here, and nothing is answered from a
    cache here; its owner does both."""

    def __init__(self, persona: str, worker: str) -> None:  # noqa: super().__init__ composes another message
        self.persona = persona
        self.worker = worker
        self.held = None
        self.current = None
        self.owner = None
        self.expired = False
        PersonaMemoryError.__init__(
            self, f"worker {worker!r} does not hold the lease of persona {persona!r} now; its owner "
                  "writes for it and answers for it"
        )


class WriterCrashedTooOften(PersonaMemoryError):
    """A persona's actor or writer crashed more often than the restart intensity allows
    (``restart.RestartPolicy``). The supervisor catches it and escalates that persona alone:
    see ``PersonaFailed``."""


class PersonaFailed(PersonaMemoryError):
    """This persona's memory was stopped: its actor or its writer kept crashing past
    ``supervisor.max_restarts`` in ``supervisor.restart_period_seconds`` (or that many of its
    jobs in a row were parked). Not the caller's fault. Its ``block()``, ``recall()`` and room
    events raise this or skip it while every other persona goes on; a human's delete, undo and
    clear-all of its rows still run on the store. Opening the memory again starts it afresh;
    ``readiness()`` lists it and the log says why."""


class MemoryClosed(PersonaMemoryError):
    """The memory is shutting down or closed; this call can no longer be served."""


class NotOnTrio(PersonaMemoryError, RuntimeError):
    """``open_memory`` was entered from asyncio or from no event loop at all.

    The memory runs on trio. From trio, enter ``open_memory`` inside ``trio.run``; from asyncio
    use ``open_memory_in_asyncio``, from plain threads ``open_memory_in_thread``: both run trio
    in a thread of their own.
    """
