"""A check's limit as the verdict shows it, in the console's dialog and `stormdeck act`'s table."""

from __future__ import annotations

from console.cli.act import render_answer
from console.client.actions import ActionAnswer
from console.model.actions import limit_text
from console.protocol import Check, VerdictLevel


def test_a_limit_in_words_gets_no_sign_a_number_its_bound() -> None:
    """Maintenance-window run: undrain of a rollout batch node read "batch 1 of 10 │ ≤ not in the batch under
    way" — a ≤ before words (and "≤ drain" for a rollout's abrupt_mode note)."""
    words = Check(
        name="rollout_batch",
        value="batch 1 of 10",
        limit="not in the batch under way",
        ok=False,
        why="…",
        level=VerdictLevel.CONFIRM,
    )
    number = Check(
        name="headroom_after_pct",
        value=26.7,
        limit=35.0,
        ok=False,
        why="…",
        level=VerdictLevel.TYPED,
        bound="min",
    )
    assert limit_text(words) == "not in the batch under way"
    assert limit_text(number) == "≥ 35"
    assert limit_text(Check(name="halt", value="running", limit=None, ok=True, why="…")) == "—"


def test_stormdeck_acts_table_gives_a_limit_in_words_no_sign() -> None:
    check = {
        "name": "rollout_batch",
        "value": "batch 1 of 10",
        "limit": "not in the batch under way",
        "ok": False,
        "why": "…",
        "bound": "max",
        "level": "confirm",
    }
    body = {
        "type": "urn:stormdeck:problem:confirmation-required",
        "detail": "asks",
        "verdict": {"level": "confirm", "action": "undrain", "checks": [check], "projections": {}},
    }
    text = render_answer(ActionAnswer(409, body, "application/problem+json"))
    assert "≤ not in the batch" not in text and "not in the batch under way" in text, text
