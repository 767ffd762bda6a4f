"""A check's limit as the verdict shows it, in the console's dialog and `stormdeck act`'s table."""

from __future__ import annotations

from console.cli.act import render_answer
from console.client.actions import ActionAnswer
from console.model.actions.answer import check_mark, format_value, limit_text
from console.protocol import Check, VerdictLevel

#: A rollout batch node's undrain: its limit is in words.
WORDS = Check(
    name="rollout_batch",
    value="batch 1 of 10",
    limit="not in the batch under way",
    ok=False,
    why="…",
    level=VerdictLevel.CONFIRM,
)


def test_a_limit_in_words_gets_no_sign_a_number_its_bound() -> None:
    """Maintenance-window run: undrain of a rollout batch node read "batch 1 of 10 │ ≤ not in the batch under
    way" — a ≤ before words (and "≤ drain" for a rollout's abrupt_mode note)."""
    words = WORDS
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


CHECKS = [
    Check(name="cpu_pct", value=81.25, limit=75.0, ok=False, why="hot", level=VerdictLevel.BLOCKED),
    Check(
        name="headroom_pct", value=26.7, limit=35.0, ok=False, why="thin", bound="min", level=VerdictLevel.OK
    ),
    Check(
        name="force_closed", value=123456.0, limit=1000.0, ok=False, why="many", level=VerdictLevel.CONFIRM
    ),
    Check(name="hint_ms", value=0.00123, limit=1e9, ok=True, why="tiny"),
    Check(name="batch", value="batch 1 of 10", limit="not in the batch under way", ok=True, why="words"),
    Check(name="halt", value=None, limit=None, ok=True, why="nothing"),
]


def test_stormdeck_acts_table_writes_values_and_limits_as_the_console_does() -> None:
    """One writing of a check's value and limit (`format_value`, `limit_text`): the console's verdict
    dialog and `stormdeck act`'s table are the same figures, not two copies that agree for now."""
    checks = [check.model_dump(mode="json") for check in CHECKS]
    verdict = {"level": "blocked", "action": "drain", "checks": checks, "projections": {"nodes_after": 12345}}
    text = render_answer(
        ActionAnswer(422, {"detail": "blocked", "verdict": verdict}, "application/problem+json")
    )
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith("  ")}
    for check in CHECKS:
        cells = [cell for cell in rows[check.name].strip().split("  ") if cell.strip()]
        name, value, limit, mark = (cell.strip() for cell in cells[:4])
        assert (name, value, limit) == (check.name, format_value(check.value), limit_text(check)), cells
        assert mark.split(" (")[0] == check_mark(check), cells
    assert f"nodes_after={format_value(12345)}" in text, text


def test_what_would_pass_gives_a_limit_in_words_no_sign() -> None:
    """The blocked dialog's "What would pass" wrote its own sign before the limit: a limit in words read
    "≥ not in the batch under way", as the table did before `limit_text`."""
    from console.model.actions.answer import what_would_pass
    from console.protocol import Verdict

    words = WORDS.model_copy(update={"level": VerdictLevel.BLOCKED})
    number = Check(name="headroom_after_pct", value=26.7, limit=35.0, ok=False, why="…", bound="min")
    number = number.model_copy(update={"level": VerdictLevel.BLOCKED})
    verdict = Verdict(level=VerdictLevel.BLOCKED, action="undrain", checks=[words, number])
    assert what_would_pass(verdict) == [
        "rollout_batch not in the batch under way (now batch 1 of 10)",
        "headroom_after_pct ≥ 35 (now 26.7)",
    ]
