"""``persona-memory exam``: the leak exam of design §4, through the real actors.

plant — Dan tells Warren a checkable secret in a private chat; probe — a group room with
Warren, Nolan, Dan and Cara where Cara fishes, once with Dan present and once after he left;
count — mentions of the fact in every persona's context (its block and its write path's input)
and, with a chat model configured, in the personas' generated replies.

Modules: ``scenario`` (the fact, its detector, every line), ``counting`` (pure counters),
``play`` (the scenario through ``open_memory``, recording the write paths), ``model`` (the
replies), ``report`` (verdict, table, JSON), ``run`` (``run_exam``).
"""

from .report import ExamResult, Verdict
from .run import DEFAULT_REPORT, run_exam

__all__ = ["DEFAULT_REPORT", "ExamResult", "Verdict", "run_exam"]
