"""The rollout and admission panel's text."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult

from console.protocol import AdmissionSettings, RolloutMode, RolloutState, RolloutStatus
from console.ui.widgets.rollout_panel import RolloutPanel, rollout_text


def lines_of(text: Text) -> list[str]:
    return text.plain.splitlines()


def test_the_rollout_panel_says_why_under_the_state_it_explains() -> None:
    def why(state: RolloutState, reason: str) -> str:
        status = RolloutStatus(state=state, batch=3, batches=8, pause_reason=reason)
        return lines_of(rollout_text(status, None))[1].strip()

    assert why(RolloutState.HALTED, "halted by operator") == "halted by operator"  # was "paused: halted …"
    assert why(RolloutState.PAUSED, "gw-012 CPU 91 % > 75 %") == "paused: gw-012 CPU 91 % > 75 %"
    assert why(RolloutState.ABORTED, "CPU > 80 % for 30 s") == "aborted: CPU > 80 % for 30 s"


def test_the_rollout_panel_says_in_one_line_when_this_fleet_cannot_roll_out() -> None:
    """`fleet up`'s nodes have no restart command: R refuses, and the panel says so before anyone presses it."""
    why = "fleet up: its nodes have no restart command, so it cannot roll them out"
    able = lines_of(rollout_text(RolloutStatus(), None))
    unable = lines_of(rollout_text(RolloutStatus(unavailable=why), None))
    assert unable[0] == able[0] == "rollout  idle"
    assert unable[1].strip() == "not on this fleet — see R"
    assert unable[:1] + unable[2:] == able  # the one line more, nothing else changed


def test_the_admission_ceiling_says_it_is_per_node() -> None:
    """User pass on `fleet up`: after a ceiling of 300 the panel read "5/s per node  burst 10 / ceiling
    300" — the rate said per node, the ceiling nothing (the form's label: "conns per node")."""
    admission = AdmissionSettings(rate_per_s=5.0, burst=10, max_connections=300, retry_after_s=(1.0, 30.0))
    lines = lines_of(rollout_text(RolloutStatus(), admission))
    assert lines[-1].strip() == "ceiling 300 per node  Retry-After 1–30 s", lines
    unlimited = lines_of(rollout_text(RolloutStatus(), AdmissionSettings.unlimited()))
    assert unlimited[-1].strip() == "ceiling none  Retry-After 1–30 s", unlimited


async def test_a_narrow_panel_wraps_between_readings_not_inside_one() -> None:
    """At 80 columns the panel read "rollout  running  batch 1 of" / "8  mode abrupt"."""
    status = RolloutStatus(state=RolloutState.RUNNING, batch=1, batches=8, mode=RolloutMode.ABRUPT)
    admission = AdmissionSettings(
        rate_per_s=150.0, burst=300, max_connections=40_000, retry_after_s=(1.0, 30.0)
    )

    class Narrow(App[None]):
        CSS = "RolloutPanel { width: 30; }"

        def compose(self) -> ComposeResult:
            yield RolloutPanel()

    app = Narrow()
    async with app.run_test(size=(40, 12)) as pilot:
        panel = app.query_one(RolloutPanel)
        panel.show(status, admission)
        await pilot.pause()
        shown = [panel.render_line(y).text.strip() for y in range(panel.size.height)]
    readings = ["batch 1 of 8", "mode abrupt", "150/s per node", "burst 300", "ceiling 40,000 per node"]
    assert [r for r in readings if not any(r in line for line in shown)] == [], shown


def test_a_reason_longer_than_the_panel_leaves_no_blank_line_and_breaks_between_words() -> None:
    """At 80x24 an aborted rollout read "rollout aborted" / "batch 2 of 10  mode drain" / "" / "aborted:
    abort criterion:" / "node CPU > 80 % for 30 s": the reason broke off its empty indent (a blank line the
    6-line panel could not spare: the admission's ceiling and Retry-After fell off), then wrapped anywhere."""
    reason = "abort criterion: gw-000 CPU 92 % > 80 % for 30 s"
    status = RolloutStatus(
        state=RolloutState.ABORTED, batch=2, batches=10, mode=RolloutMode.DRAIN, pause_reason=reason
    )
    lines = lines_of(rollout_text(status, AdmissionSettings.unlimited(), width=28))
    assert all(line.strip() for line in lines), lines
    assert all(len(line) <= 28 for line in lines), lines
    said = " ".join(line.strip() for line in lines)
    assert f"aborted: {reason}" in said, lines


def test_a_reason_never_breaks_a_figure_from_its_unit() -> None:
    """On-call walk at 80×24: the halt read "halted: timed out after 60" / "s waiting for a back" — the
    unit on the next line, under a bare figure. A figure and its unit are one word to the line breaker."""
    reason = "timed out after 60 s waiting for a back in rotation"
    status = RolloutStatus(
        state=RolloutState.HALTED, batch=1, batches=3, mode=RolloutMode.DRAIN, pause_reason=reason
    )
    lines = [line.strip() for line in lines_of(rollout_text(status, AdmissionSettings.unlimited(), width=28))]
    assert any("60 s" in line for line in lines), lines
    assert not any(line.startswith(("s ", "% ", "ms ")) for line in lines), lines
