"""``OfflineMind``: the ``Mind`` port answered by rules, with no network and no model.

It reads a transcript the way the extraction and router prompts ask a model to (design §2.1,
§2.2), but with rules a person can read: ``extract`` for call A, ``route`` for call B. It is
weaker than a model and says so — it only understands first-person statements, plain dates
and a closed set of change cues — but it is deterministic (the same request always gets the
same answer) and honest (no answer is keyed to a known input). ``make demo``, the tests and
the LoCoMo benchmark use it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import trio

from ...errors import ConfigError
from ..port import ExtractionRequest, RoutingRequest
from .extract import PRONOUNS, extract_memories
from .processes import ReaderProcesses
from .route import route_candidate


@attrs.frozen
class OfflineMind:
    """The bundled rule-based mind; implements ``minds.port.Mind``.

    Args:
        pronouns: how each persona's promises speak of it — ``{"warren": "he"}`` makes
            "Warren said he would send u:42 the letter"; a persona not named here is "they".
        max_per_line: at most this many memories from one transcript line (those of
            importance 7 and up, then the most specific).
        importance_min: statements rated below this are not offered at all (validation drops
            them anyway; 3 is the design's bar).
        processes: where ``extract`` reads: ``None``, on a trio worker thread (sharing the GIL
            with the event loop); else in these worker processes, which ``aclose`` shuts down
            (``mind.offline_processes``). The answers are the same.
    """

    pronouns: Mapping[str, str] = attrs.field(factory=dict, converter=dict)
    max_per_line: int = 2
    importance_min: int = 3
    processes: ReaderProcesses | None = attrs.field(default=None, eq=False, repr=False)

    @pronouns.validator
    def _check_pronouns(self, attribute: attrs.Attribute, value: Mapping[str, str]) -> None:
        for slug, pronoun in value.items():
            if pronoun not in PRONOUNS:
                raise ConfigError(
                    f"the pronoun of persona {slug!r} must be one of {sorted(PRONOUNS)}, got {pronoun!r}"
                )

    def portable_extract(self, request: ExtractionRequest) -> Callable[[], dict[str, Any]]:
        """``extract``'s reading of ``request`` as a function that pickles, for the write path
        to run in a worker process with the steps after it (``write.offloaded``)."""
        return functools.partial(
            extract_memories,
            request,
            max_per_line=self.max_per_line,
            importance_min=self.importance_min,
            pronouns=self.pronouns,
        )

    async def extract(self, request: ExtractionRequest) -> dict[str, Any]:
        """Read the slice off the event loop, one hop per slice: in a worker process when the
        mind has ``processes``, they are up and another slice is being read meanwhile (beside
        the loop's core); else on a worker thread (so a long slice's pattern work — half a
        second for thousands of lines — never stalls the loop). The answer is the same."""
        read = self.portable_extract(request)
        if self.processes is None:
            return await trio.to_thread.run_sync(read)
        with self.processes.chosen() as to_workers:
            if to_workers:
                return await self.processes.run(read)
            return await trio.to_thread.run_sync(read)

    async def route(self, request: RoutingRequest) -> dict[str, Any]:
        return route_candidate(request)

    async def aclose(self) -> None:
        if self.processes is not None:
            await self.processes.aclose()
