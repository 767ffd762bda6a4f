"""`console.model.actions.thresholds`: the server's lines over the console's, and why the console's own."""

from __future__ import annotations

from console.guards import Thresholds
from console.model.actions.form import Prefill
from console.model.actions.thresholds import NOT_OFFERED, own_thresholds, servers_thresholds
from console.protocol import ThresholdsRecord


def record(**values: float) -> ThresholdsRecord:
    return ThresholdsRecord.model_validate(
        {"thresholds": {name: {"value": value, "source": "env"} for name, value in values.items()}}
    )


def test_the_servers_values_win_and_a_line_it_does_not_name_keeps_the_consoles() -> None:
    own = Thresholds(headroom_min_pct=30)
    lines = servers_thresholds(record(cpu_pause_pct=60, newer_servers_line=3), own)
    assert lines.fallback is None and lines.whose == ""
    assert lines.thresholds == Thresholds(cpu_pause_pct=60, headroom_min_pct=30)
    prefill = Prefill({"batch_size": "2"}, "note")
    assert lines.noted(prefill) is prefill  # nothing to say: the server's lines


def test_values_the_console_refuses_leave_its_own_and_say_which() -> None:
    lines = servers_thresholds(record(cpu_pause_pct=90), Thresholds())  # above the 80 % abort line
    assert lines.thresholds == Thresholds()
    assert lines.fallback is not None and "cpu_pause_pct = 90" in lines.fallback


def test_the_consoles_own_say_why_under_the_note() -> None:
    missing = own_thresholds(Thresholds(), 404, "fleet API answered 404: no such path")
    assert missing.fallback == NOT_OFFERED
    noted = missing.noted(Prefill({"count": "3"}, "the nodes that bring headroom to 35 %"))
    assert noted.values == {"count": "3"}
    assert noted.source.splitlines() == [
        "the nodes that bring headroom to 35 %",
        "▲ pre-filled with this console's thresholds: the server has no GET /v1/thresholds",
    ]
    unreachable = own_thresholds(Thresholds(), 0, "cannot reach the fleet API")
    assert unreachable.fallback == "the server's could not be read (cannot reach the fleet API)"
