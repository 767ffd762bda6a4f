"""The rollout and admission panel's text."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult

from console.protocol import AdmissionSettings, RolloutMode, RolloutState, RolloutStatus, RolloutWait
from console.ui.widgets.rollout_panel import RolloutPanel, rollout_text

from .conftest import fleet_ready


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
    assert unable[1].strip() == "unable: no restart command"
    assert unable[:1] + unable[2:] == able  # the one line more, nothing else changed


def test_a_fleet_that_cannot_roll_out_for_another_reason_says_its_first_clause_or_see_r() -> None:
    """Free text from the server: its first clause where it fits the 28-column panel, whole; else R says it."""

    def said(why: str) -> str:
        return lines_of(rollout_text(RolloutStatus(unavailable=why), None, width=28))[1].strip()

    assert said("rollouts are switched off; ask the owner") == "rollouts are switched off"
    assert said("this fleet's rollouts are switched off by its owner; ask") == "not on this fleet — see R"


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


def _running(wait: RolloutWait | None) -> RolloutStatus:
    return RolloutStatus(
        state=RolloutState.RUNNING, batch=1, batches=3, mode=RolloutMode.DRAIN, waiting_for=wait
    )


def test_a_running_rollout_says_what_it_waits_for_and_how_long() -> None:
    """On-call walk, controller over real nodes: for the 60 s a restarted node had to come back the panel
    read "rollout running  batch 1 of 3" and nothing else — a wait and a hang looked the same."""

    def said(wait: RolloutWait | None) -> list[str]:
        return [line.strip() for line in lines_of(rollout_text(_running(wait), None))]

    restart = RolloutWait(what="restart", nodes=["node-2"], waited_s=12.4, limit_s=60.0)
    assert said(restart)[1] == "waiting for node-2 to come back (12 of 60 s)"
    drain = RolloutWait(what="drain", nodes=["a", "b"], waited_s=40.0, limit_s=610.0)
    assert said(drain)[1] == "waiting for a, b to drain (40 of 610 s)"
    assert said(RolloutWait(what="interval", waited_s=20.0, limit_s=60.0))[1] == "next batch in 40 s"
    many = RolloutWait(what="restart", nodes=[f"gw-{n}" for n in range(7)], waited_s=3.0)
    assert said(many)[1] == "waiting for gw-0, gw-1, gw-2 and 4 more to come back (3 s)"
    assert said(RolloutWait(what="quorum", waited_s=5.0))[1] == "waiting for quorum (5 s)"  # a newer kind
    narrow = [line.strip() for line in lines_of(rollout_text(_running(restart), None, width=23))]
    assert not any(line.startswith("s)") for line in narrow), narrow  # "60" keeps its unit
    assert said(None) == ["rollout  running  batch 1 of 3  mode drain", "admission  —"]  # an older server


async def test_at_80_by_24_the_wait_reads_in_whole_words(storm_app) -> None:
    """The fleet view at 80×24: the wait under the rollout's state, every word whole, the admission kept."""
    wait = RolloutWait(what="restart", nodes=["gw-012", "gw-013"], waited_s=12.0, limit_s=60.0)
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        storm_app.model.frame.rollout = _running(wait)
        storm_app.refresh_views()
        await pilot.pause()
        panel = storm_app.screen.query_one(RolloutPanel)
        shown = [panel.render_line(y).text.strip() for y in range(panel.size.height)]
    expected = "waiting for gw-012, gw-013 to come back (12 of 60 s)"
    # Joined by one space, a line broken inside a word ("gw-0" / "12") or cut ("gw-01…") does not match.
    assert expected in " ".join(line for line in shown if line), shown
    assert any(line.startswith("admission") for line in shown), shown


#: What `fleet up`'s controller says in every frame (`_restart_refusal`): free text, the cause mid-sentence.
FLEET_UP_UNAVAILABLE = (
    "restart: 'node-1' is not allowed; expected a node with a restart command; `fleet up` starts its nodes "
    "without one, so it cannot roll them out: serve nodes you can restart with `stormdeck controller --nodes "
    'FILE`, restart = "…{node}…" for each node in FILE (docs/gateway.md)'
)


async def test_at_80_by_24_the_panel_says_what_the_fleet_lacks_to_roll_out(storm_app) -> None:
    """On-call walk on `fleet up`: the panel said "not on this fleet — see R", not why. It says what is
    missing, in whole words, and keeps the admission lines under it."""
    from console.protocol import RolloutStatus

    from .test_oncall import visible_lines

    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        frame = storm_app.model.frame
        assert frame is not None
        unable = RolloutStatus(unavailable=FLEET_UP_UNAVAILABLE)
        storm_app.model.frame = frame.model_copy(update={"rollout": unable})
        storm_app.refresh_views()
        await pilot.pause()
        panel = storm_app.screen.query_one(RolloutPanel)
        lines = [line.strip() for line in visible_lines(panel)]
        assert lines[1] == "unable: no restart command", lines  # one line: the panel has six
        assert lines[-1] == "Retry-After 1–30 s", lines  # the admission still shown whole
