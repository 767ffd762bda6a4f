"""The rollout and admission panel's text."""

from __future__ import annotations

from console.protocol import RolloutState, RolloutStatus
from console.ui.widgets.rollout_panel import rollout_text


def test_the_rollout_panel_says_why_under_the_state_it_explains() -> None:
    def why(state: RolloutState, reason: str) -> str:
        status = RolloutStatus(state=state, batch=3, batches=8, pause_reason=reason)
        return rollout_text(status, None).plain.splitlines()[1].strip()

    assert why(RolloutState.HALTED, "halted by operator") == "halted by operator"  # was "paused: halted …"
    assert why(RolloutState.PAUSED, "gw-012 CPU 91 % > 75 %") == "paused: gw-012 CPU 91 % > 75 %"
    assert why(RolloutState.ABORTED, "CPU > 80 % for 30 s") == "aborted: CPU > 80 % for 30 s"


def test_the_rollout_panel_says_in_one_line_when_this_fleet_cannot_roll_out() -> None:
    """`fleet up`'s nodes have no restart command: R refuses, and the panel says so before anyone presses it."""
    why = "fleet up: its nodes have no restart command, so it cannot roll them out"
    able = rollout_text(RolloutStatus(), None).plain.splitlines()
    unable = rollout_text(RolloutStatus(unavailable=why), None).plain.splitlines()
    assert unable[0] == able[0] == "rollout  idle"
    assert unable[1].strip() == "not on this fleet — see R"
    assert unable[:1] + unable[2:] == able  # the one line more, nothing else changed


def test_the_admission_ceiling_says_it_is_per_node() -> None:
    """User pass on `fleet up`: after a ceiling of 300 the panel read "5/s per node  burst 10 / ceiling
    300" — the rate said per node, the ceiling nothing (the form's label: "conns per node")."""
    from console.protocol import AdmissionSettings

    admission = AdmissionSettings(rate_per_s=5.0, burst=10, max_connections=300, retry_after_s=(1.0, 30.0))
    lines = rollout_text(RolloutStatus(), admission).plain.splitlines()
    assert lines[-1].strip() == "ceiling 300 per node  Retry-After 1–30 s", lines
    unlimited = rollout_text(RolloutStatus(), AdmissionSettings.unlimited()).plain.splitlines()
    assert unlimited[-1].strip() == "ceiling none  Retry-After 1–30 s", unlimited
