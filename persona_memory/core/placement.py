"""Where the block goes in a persona's prompt, ready for the two common chat APIs. Pure.

Rules (design §3, "render" and "the block churns the cache"):
- The block is the persona's *third* system block: after the persona's own instructions and
  after the room's materials, and before the conversation. It changes only at open, join and
  leave, so everything before it stays a cached prefix, and it carries its own cache
  breakpoint so it is a cached prefix too for every turn of the room.
- Anthropic-style messages: a text block ``{"type": "text", "text": block, "cache_control":
  {"type": "ephemeral"}}``, appended to the ``system`` list after the materials' blocks. An
  empty block is no block at all (``None``): the API refuses empty text blocks, and an empty
  breakpoint would cache nothing.
- OpenAI-style messages: a ``{"role": "system", "content": block}`` message after the other
  system messages (prefix caching there is automatic; the same order keeps it); ``None`` when
  the block is empty.
- The generation is the room's version the block was built for (a new one at every open, join
  and leave): a runtime that caches prompts keys them on it.
"""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class BuiltBlock:
    """A persona's block for one room, as built for one generation of the room."""

    persona: str
    room_id: str
    text: str
    generation: int
    char_limit: int
    used: int = 0  # the meter: characters of memory lines, of ``char_limit``

    @property
    def chars(self) -> int:
        """The whole text's length, wrapper included (what it costs in the prompt)."""
        return len(self.text)

    def anthropic_system_block(self) -> dict[str, Any] | None:
        if not self.text:
            return None
        return {"type": "text", "text": self.text, "cache_control": {"type": "ephemeral"}}

    def openai_system_message(self) -> dict[str, str] | None:
        if not self.text:
            return None
        return {"role": "system", "content": self.text}
