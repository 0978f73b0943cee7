"""``run_exam``: the leak exam end to end — play, count, the model half, print, report.

Rules:
- The offline half always runs: the scenario through ``open_memory`` on a temporary file.
- The model half runs only when ``[exam] kind`` names a model; otherwise the printout says it
  did not run and how to configure it.
- The JSON report is written before ``run_exam`` returns, whatever the verdict.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import trio

from ..clock import ManualClock
from ..compose import make_limiter
from ..embedding import Embedder
from ..settings import Settings
from .model import ChatModel, make_chat, run_model_half
from .play import play
from .report import ExamResult, Offline, as_json, table

DEFAULT_REPORT = "persona-memory-exam.json"


async def run_exam(
    settings: Settings,
    *,
    report_path: str | Path = DEFAULT_REPORT,
    config_path: str | None = None,
    clock: ManualClock | None = None,
    embedder: Embedder | None = None,
    chat: ChatModel | None = None,
    out: Callable[[str], None] = print,
) -> ExamResult:
    """Run the exam, print its table with ``out`` and write the JSON report to ``report_path``.

    Args:
        settings: the loaded settings; ``[exam]`` picks the model half's chat model.
        config_path: the file ``settings`` came from, for the report.
        clock, embedder: passed to the exam's memory (tests).
        chat: overrides the chat model ``[exam]`` names.

    Raises:
        ProviderError: the mind, the embedder or the chat model failed.
        ConfigError: ``[exam]`` names an endpoint it cannot use.
    """
    played = await play(settings, turns=settings.exam.turns, clock=clock, embedder=embedder)
    if chat is None:
        chat = make_chat(settings, make_limiter(settings))
    model = None
    if chat is not None:
        try:
            model = await run_model_half(chat, played, settings.exam)
        finally:
            with trio.CancelScope(shield=True):
                await chat.aclose()
    result = ExamResult(settings, config_path, played, Offline.of(played), model)
    out(table(result))
    path = Path(report_path)
    text = json.dumps(as_json(result), indent=2, ensure_ascii=False) + "\n"
    await trio.to_thread.run_sync(path.write_text, text, "utf-8")
    out(f"report: {path}")
    return result
