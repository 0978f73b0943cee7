"""persona-memory: the long-term memory of AI personas in a multi-user chat product.

The chat runtime's surface (``shared/API.md``)::

    settings = load_settings("config.toml")
    async with open_memory(settings) as memory:
        await memory.send(RoomOpened(...))
        block = await memory.block("warren", "r1")
"""

from .clock import ManualClock, SystemClock, WallClock
from .errors import (
    ConfigError,
    EmbedderUnavailable,
    ForeignDatabase,
    InvalidInput,
    MemoryClosed,
    NotInRoom,
    NotOnTrio,
    NotYourMemory,
    PersonaMemoryError,
    ProviderError,
    StorageError,
    UnknownRoom,
    PersonaFailed,
    WriterCrashedTooOften,
)
from .bridge import open_memory_in_asyncio, open_memory_in_thread
from .bridge_calls import AsyncioMemory, ThreadedMemory
from .memory import Memory, open_memory
from .messages import MemberJoined, MemberLeft, RoomArchived, RoomEvent, RoomOpened, RoomWentQuiet
from .rows import KINDS, MemoryRow, UserControls
from .settings import Settings, load_settings

__all__ = [
    "AsyncioMemory",
    "KINDS",
    "ConfigError",
    "EmbedderUnavailable",
    "ForeignDatabase",
    "InvalidInput",
    "ManualClock",
    "MemberJoined",
    "MemberLeft",
    "Memory",
    "MemoryClosed",
    "MemoryRow",
    "NotInRoom",
    "NotOnTrio",
    "NotYourMemory",
    "PersonaMemoryError",
    "ProviderError",
    "RoomArchived",
    "RoomEvent",
    "RoomOpened",
    "RoomWentQuiet",
    "Settings",
    "StorageError",
    "SystemClock",
    "ThreadedMemory",
    "UnknownRoom",
    "UserControls",
    "WallClock",
    "PersonaFailed",
    "WriterCrashedTooOften",
    "load_settings",
    "open_memory",
    "open_memory_in_asyncio",
    "open_memory_in_thread",
]
