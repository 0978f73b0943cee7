"""The LoCoMo bench's loss breakdown (``bench/locomo.py``): where an answerable question's
answer went — never written into a row, written but left out of the block, or in the block.

The bench lives outside the package, so it is loaded from its path.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "bench_locomo", Path(__file__).resolve().parent.parent / "bench" / "locomo.py"
)
locomo = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(locomo)


@pytest.mark.parametrize(
    ("block_holds", "rows_hold", "loss"),
    [(True, True, "held"), (True, False, "held"), (False, True, "ranking"), (False, False, "extraction")],
)
def test_the_loss_follows_the_block_first_then_the_rows(block_holds: bool, rows_hold: bool, loss: str) -> None:
    assert locomo.loss_of(block_holds, rows_hold) == loss


def _outcome(loss: str | None, elsewhere: bool = False):
    return locomo.Outcome(4, False, False, False, loss == "held" if loss else None, None, False, loss, elsewhere)


def test_the_breakdown_counts_only_answerable_questions_and_their_shares() -> None:
    outcomes = [
        _outcome("extraction"),
        _outcome("ranking"),
        _outcome("held"),
        _outcome("held", elsewhere=True),
        _outcome(None),  # not answerable: left out
    ]

    lines = locomo.losses(outcomes)

    assert lines[0].endswith(": 4")
    assert lines[1].startswith("  extraction loss: 1 (25.0%)")
    assert lines[2].startswith("  ranking loss: 1 (25.0%)")
    assert lines[3].startswith("  both hold: 2 (50.0%)")
    assert "(1 of them with no evidence row holding it)" in lines[3]


def test_the_answer_is_held_by_half_its_content_words() -> None:
    assert locomo.holds_answer("They keep bees and grow pears on the hill.", "bees and plums") is True
    assert locomo.holds_answer("They grow pears on the hill.", "bees and plums") is False
