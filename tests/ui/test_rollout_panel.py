"""The rollout and admission panel's text."""

from __future__ import annotations

from itertools import pairwise

import pytest
from rich.text import Text
from textual.app import App, ComposeResult

from console.protocol import (
    AdmissionInForce,
    AdmissionSettings,
    Frame,
    RolloutMode,
    RolloutState,
    RolloutStatus,
    RolloutWait,
    UnavailableReason,
)
from console.ui.widgets.rollout_panel import RolloutPanel, rollout_text
from console.ui.words import UNITS

from .conftest import fleet_ready

#: The panel's columns at 80×24 (its content width in the fleet view).
PANEL_WIDTH = 28


def lines_of(text: Text) -> list[str]:
    return text.plain.splitlines()


def test_the_rollout_panel_says_why_under_the_state_it_explains() -> None:
    def why(state: RolloutState, reason: str) -> str:
        status = RolloutStatus(state=state, batch=3, batches=8, pause_reason=reason)
        return lines_of(rollout_text(status, None))[1].strip()

    assert why(RolloutState.HALTED, "halted by operator") == "halted by operator"  # was "paused: halted …"
    assert why(RolloutState.PAUSED, "gw-012 CPU 91 % > 75 %") == "paused: gw-012 CPU 91 % > 75 %"
    assert why(RolloutState.ABORTED, "CPU > 80 % for 30 s") == "aborted: CPU > 80 % for 30 s"


def test_a_halted_or_paused_rollout_says_since_when() -> None:
    """An operator who comes to a halted rollout asks first how long it has stood still."""

    def first(**fields) -> str:
        return lines_of(rollout_text(RolloutStatus(batch=3, batches=8, **fields), None))[0]

    assert "since 0:02:05" in first(state=RolloutState.HALTED, halted_at_s=125.0)
    assert "since 0:01:40" in first(state=RolloutState.PAUSED, paused_at_s=100.0)
    assert "since" not in first(state=RolloutState.HALTED)  # a source that does not say
    assert "since" not in first(state=RolloutState.RUNNING, halted_at_s=125.0)


def test_the_rollout_panel_says_in_one_line_when_this_fleet_cannot_roll_out() -> None:
    """`fleet up`'s nodes have no restart command: R refuses, and the panel says so before anyone presses it —
    from the typed reason, whatever the words say (they were searched for "restart" and "command")."""
    why = "the nodes cannot be cycled here"  # words that say neither
    able = lines_of(rollout_text(RolloutStatus(), None))
    unable = lines_of(
        rollout_text(
            RolloutStatus(unavailable=why, unavailable_reason=UnavailableReason.NO_RESTART_COMMAND), None
        )
    )
    assert unable[0] == able[0] == "rollout  idle"
    assert unable[1].strip() == "unable: no restart command"
    assert unable[:1] + unable[2:] == able  # the one line more, nothing else changed


def test_a_reason_this_console_does_not_know_is_named_and_no_remedy_guessed() -> None:
    """A newer server's reason: said by its name, in one line; what to do is R's to say, in the server's
    words."""

    def said(reason: str) -> list[str]:
        status = RolloutStatus(unavailable="whatever the server says", unavailable_reason=reason)
        return lines_of(rollout_text(status, None, width=PANEL_WIDTH))

    assert said("change_freeze")[1].strip() == "unable: change freeze"
    long = said("maintenance_window_closed_for_the_region")
    assert long[1].strip() == "unable: maintenance…" and len(long[1]) <= PANEL_WIDTH, long
    assert long[2].startswith("admission"), long  # one line still


def test_an_older_servers_words_are_said_briefly_not_searched() -> None:
    """An older server says why in words only (`unavailable`, no `unavailable_reason`): its first clause where
    it fits the panel (26 columns under the state) whole, else that it cannot and where to read why — never a cause read into them."""

    def said(why: str) -> str:
        return lines_of(rollout_text(RolloutStatus(unavailable=why), None, width=PANEL_WIDTH))[1].strip()

    assert said("rollouts are switched off; ask the owner") == "rollouts are switched off"
    assert said("this fleet's rollouts are switched off by its owner; ask") == "unable to roll out — see R"
    # An older `fleet up`'s words: they name a restart command, but only a typed reason says it is the cause.
    assert said(FLEET_UP_UNAVAILABLE) == "unable to roll out — see R"


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
    # with no limit, "so far": "(3 s)" counting up read as the time left
    assert said(many)[1] == "waiting for gw-0, gw-1, gw-2 and 4 more to come back (3 s so far)"
    assert (
        said(RolloutWait(what="quorum", waited_s=5.0))[1] == "waiting for quorum (5 s so far)"
    )  # a newer kind
    narrow = [line.strip() for line in lines_of(rollout_text(_running(restart), None, width=23))]
    assert not any(line.startswith("s)") for line in narrow), narrow  # "60" keeps its unit
    assert said(None) == ["rollout  running  batch 1 of 3  mode drain", "admission  —"]  # an older server


def test_a_drain_mode_rollout_says_the_rate_its_batches_drain_at() -> None:
    """The rate the rollout was started with (`drain_rate_per_s`) beside its batches, with the mode in its
    place, on one line with them at 80×24; the mode alone as before where it asked for none."""
    status = _running(INTERVAL_WAIT).model_copy(update={"drain_rate_per_s": 10.0})
    assert lines_of(rollout_text(status, None))[0] == "rollout  running  batch 1 of 3  drain 10/s"
    narrow = [line.strip() for line in lines_of(rollout_text(status, None, width=PANEL_WIDTH))]
    assert narrow[:3] == ["rollout  running", "batch 1 of 3  drain 10/s", "next batch in 40 s"], narrow
    tenth = status.model_copy(update={"drain_rate_per_s": 66.7})
    assert lines_of(rollout_text(tenth, None))[0].endswith("drain 66.7/s")
    fast = status.model_copy(update={"drain_rate_per_s": 2_500.0})
    assert lines_of(rollout_text(fast, None))[0].endswith("drain 2.5k/s")
    assert lines_of(rollout_text(_running(None), None))[0] == "rollout  running  batch 1 of 3  mode drain"
    # An abrupt rollout drains nothing: a rate it was sent with is not said.
    abrupt = status.model_copy(update={"mode": RolloutMode.ABRUPT})
    assert lines_of(rollout_text(abrupt, None))[0] == "rollout  running  batch 1 of 3  mode abrupt"


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


#: What an older `fleet up` controller said in every frame (`_restart_refusal`): free text, the cause mid-sentence.
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
        unable = RolloutStatus(
            unavailable=FLEET_UP_UNAVAILABLE, unavailable_reason=UnavailableReason.NO_RESTART_COMMAND
        )
        storm_app.model.frame = frame.model_copy(update={"rollout": unable})
        storm_app.refresh_views()
        await pilot.pause()
        panel = storm_app.screen.query_one(RolloutPanel)
        lines = [line.strip() for line in visible_lines(panel)]
        assert lines[1] == "unable: no restart command", lines  # one line: the panel has six
        assert lines[-1] == "Retry-After 1–30 s", lines  # the admission still shown whole


#: Admission as an operator sets it on `fleet up`: every reading of the panel's admission block shown.
FLEET_UP_ADMISSION = AdmissionSettings(
    rate_per_s=5.0, burst=10, max_connections=300, retry_after_s=(1.0, 30.0)
)
RESTART_WAIT = RolloutWait(what="restart", nodes=["node-2"], waited_s=12.0, limit_s=60.0)
INTERVAL_WAIT = RolloutWait(what="interval", waited_s=20.0, limit_s=60.0)


def test_readings_give_way_in_the_stated_order_as_the_panel_gets_shorter() -> None:
    """At 80×24 (28 columns, 6 lines) a rollout waiting for node-2 dropped the admission's last lines: its
    ceiling went with Retry-After. Readings give way one at a time, least needed first (`GIVES_WAY`):
    Retry-After, burst, mode, ceiling, batch k of n; the state, what it waits for and the admission rate
    stay — the wait cut short only once nothing else is left to give."""
    status = _running(RESTART_WAIT)

    def shown(height: int | None) -> list[str]:
        lines = lines_of(rollout_text(status, FLEET_UP_ADMISSION, width=PANEL_WIDTH, height=height))
        assert height is None or len(lines) <= height, lines
        assert all(len(line) <= PANEL_WIDTH for line in lines), lines
        return [line.strip() for line in lines]

    wait = ["waiting for node-2 to come", "back (12 of 60 s)"]
    assert shown(None) == [
        "rollout  running",
        "batch 1 of 3  mode drain",
        *wait,
        "admission  5/s per node",
        "burst 10",
        "ceiling 300 per node",
        "Retry-After 1–30 s",
    ]
    assert shown(8) == shown(None)  # room for it all: nothing gives way
    rate, ceiling = "admission  5/s per node", "ceiling 300 per node"
    assert shown(7) == ["rollout  running", "batch 1 of 3  mode drain", *wait, rate, "burst 10", ceiling]
    assert shown(6) == ["rollout  running", "batch 1 of 3  mode drain", *wait, rate, ceiling]
    assert shown(5) == ["rollout  running", "batch 1 of 3", *wait, rate]
    assert shown(4) == ["rollout  running", *wait, rate]
    # Shorter than the wait itself: it is cut, said so, and the admission rate stays under it.
    assert shown(3) == ["rollout  running", "waiting for node-2 to…", rate]


def test_a_shorter_panel_gives_way_only_as_far_as_it_must() -> None:
    """The interval's one line leaves room for the admission's burst: only Retry-After gives way. Admission
    on some nodes only keeps saying so: without it the rate reads as every node's."""
    lines = lines_of(rollout_text(_running(INTERVAL_WAIT), FLEET_UP_ADMISSION, PANEL_WIDTH, 6))
    assert [line.strip() for line in lines] == [
        "rollout  running",
        "batch 1 of 3  mode drain",
        "next batch in 40 s",
        "admission  5/s per node",
        "burst 10",
        "ceiling 300 per node",
    ], lines
    on_some = FLEET_UP_ADMISSION.model_copy(update={"nodes": ["node-1", "node-2"]})
    lines = lines_of(rollout_text(_running(RESTART_WAIT), on_some, PANEL_WIDTH, 6))
    assert lines[-2:] == ["admission  5/s on 2 nodes,", "  unlimited elsewhere"], lines


#: 480 nodes, unlimited fleet-wide.
FLEET_480 = tuple(f"gw-{i:03d}" for i in range(480))


def _overridden(*overrides: AdmissionSettings) -> AdmissionInForce:
    return AdmissionInForce(AdmissionSettings.unlimited(), overrides, FLEET_480)


def test_admission_set_on_some_nodes_says_where_it_runs_and_what_runs_elsewhere() -> None:
    """Found in review: after `PUT /v1/admission` with `nodes`, the panel read "admission  unlimited" while
    those nodes refused at 5/s. Each figure says where it runs; what every node runs alike is said once."""
    slow = FLEET_UP_ADMISSION.model_copy(
        update={"max_connections": None, "nodes": ["gw-001", "gw-002", "gw-003"]}
    )
    lines = [line.strip() for line in lines_of(rollout_text(RolloutStatus(), _overridden(slow)))]
    assert lines[1:] == [
        "admission  5/s on 3 nodes,  unlimited elsewhere  burst 10 on 3 nodes,  — elsewhere",
        "ceiling none  Retry-After 1–30 s",
    ], lines
    # A second subset: one node is named, the values it shares with the rest counted with them.
    capped = AdmissionSettings(
        rate_per_s=50.0, max_connections=9000, retry_after_s=(1.0, 30.0), nodes=["gw-009"]
    )
    lines = [line.strip() for line in lines_of(rollout_text(RolloutStatus(), _overridden(slow, capped)))]
    assert lines[1:] == [
        "admission  5/s on 3 nodes,  50/s on gw-009,  unlimited elsewhere  burst 10 on 3 nodes,  — elsewhere",
        "ceiling 9,000 on gw-009,  none elsewhere  Retry-After 1–30 s",
    ], lines


def test_at_80_by_24_the_rate_and_where_it_runs_never_give_way() -> None:
    slow = FLEET_UP_ADMISSION.model_copy(update={"nodes": ["gw-001", "gw-002", "gw-003"]})
    lines = lines_of(rollout_text(_running(RESTART_WAIT), _overridden(slow), PANEL_WIDTH, 6))
    assert all(len(line) <= PANEL_WIDTH for line in lines), lines
    assert [line.strip() for line in lines][-2:] == ["admission  5/s on 3 nodes,", "unlimited elsewhere"], (
        lines
    )


def test_every_node_overridden_alike_reads_as_every_nodes_setting() -> None:
    everyone = FLEET_UP_ADMISSION.model_copy(update={"nodes": list(FLEET_480)})
    assert lines_of(rollout_text(RolloutStatus(), _overridden(everyone))) == lines_of(
        rollout_text(RolloutStatus(), FLEET_UP_ADMISSION)
    )


async def test_at_80_by_24_a_waiting_rollout_keeps_the_admission_rate_and_ceiling(storm_app) -> None:
    """On-call walk at 80×24, `fleet up` with a rate and a ceiling set: while the rollout waited for node-2,
    the panel's last two lines — the ceiling, Retry-After — fell off the bottom, cut by its six lines. The
    ceiling stays now; burst and Retry-After give way."""
    from .test_oncall import visible_lines

    waits = (
        (RESTART_WAIT, "waiting for node-2 to come back (12 of 60 s)"),
        (INTERVAL_WAIT, "next batch in 40 s"),
    )
    async with storm_app.run_test(size=(80, 24)) as pilot:
        await fleet_ready(storm_app)
        frame = storm_app.model.frame
        assert frame is not None
        for wait, said in waits:
            storm_app.model.frame = frame.model_copy(
                update={"rollout": _running(wait), "admission": FLEET_UP_ADMISSION}
            )
            storm_app.refresh_views()
            await pilot.pause()
            panel = storm_app.screen.query_one(RolloutPanel)
            lines = [line.strip() for line in visible_lines(panel)]
            assert len(lines) == 6, lines  # the panel at 80×24: what it shows is all it has
            assert lines[0].startswith("rollout  running"), lines
            assert said in " ".join(lines), lines
            assert "admission  5/s per node" in lines and "ceiling 300 per node" in lines, lines
            assert not any("…" in line for line in lines), lines  # nothing cut mid-reading


#: Pause and abort reasons with every unit `console.ui.words` keeps with its figure, punctuation after it.
UNIT_REASONS = [
    "abort criterion: reconnects 39 k/s, 73× the steady 528/s for 30 s",
    "timed out after 60 s; node-3 never came back in rotation",
    "connections fell 7.0 % within 60 s (1.30 M → 1.21 M; alarm over 5 %)",
    "gw-012 CPU 91 % > 75 %; no restart is safe, add capacity",
]


@pytest.mark.parametrize("reason", UNIT_REASONS)
@pytest.mark.parametrize("width", range(16, 44))
def test_the_panel_keeps_each_figure_with_its_unit_as_the_alarms_do(reason: str, width: int) -> None:
    """The panel had its own rule (units s, ms, %, /s, min; a ")" after one): "after 60" / "s; node-3"
    at 28 columns, "39" / "k/s, 73×", "1.21" / "M;". Laid out by console.ui.words now, as the alarms are."""
    status = RolloutStatus(state=RolloutState.PAUSED, pause_reason=reason)
    lines = [line.strip() for line in lines_of(rollout_text(status, None, width=width))]
    assert all(len(line) <= width for line in lines), lines
    for above, below in pairwise(lines):
        assert not (above[-1:].isdigit() and below.split()[0].rstrip(").,;:") in UNITS), (above, below)
    assert " ".join(lines[1:-1]).split() == f"paused: {reason}".split()  # every word, in order


def test_a_reason_cut_short_ends_at_its_clause_not_on_one_word_of_the_next() -> None:
    """Three lines: the state, its reason in one, the admission rate. The cut said "down; add…" — "add"
    of nothing; it ends at the clause now, as the alarms' words do."""
    status = RolloutStatus(state=RolloutState.PAUSED, pause_reason="gw-3 is down; add capacity first")
    lines = lines_of(rollout_text(status, AdmissionSettings.unlimited(), width=PANEL_WIDTH, height=3))
    assert [line.strip() for line in lines] == [
        "rollout  paused",
        "paused: gw-3 is down…",
        "admission  unlimited",
    ]


def test_a_name_wider_than_the_panel_is_carried_onto_the_next_line_not_cut_off() -> None:
    """A node name wider than the panel ran past its edge (cut there by the terminal); it is the one word
    broken, at the panel's width, so every letter of it is on screen."""
    name = "gw-canary-eu-west-1-0001-spare"
    wait = RolloutWait(what="restart", nodes=[name], waited_s=3.0, limit_s=60.0)
    lines = lines_of(rollout_text(_running(wait), None, width=PANEL_WIDTH))
    assert all(len(line) <= PANEL_WIDTH for line in lines), lines
    assert name in "".join(line.strip() for line in lines), lines


@pytest.mark.parametrize(
    ("state", "batch", "said"),
    [
        # Before its first batch — paused at once on a hot survivor, or started and not yet under way: it
        # read "rollout paused batch 0 of 3" on a real fleet (found in review).
        (RolloutState.PAUSED, 0, "before batch 1 of 3"),
        (RolloutState.RUNNING, 0, "before batch 1 of 3"),
        (RolloutState.HALTED, 0, "before batch 1 of 3"),
        # A rollout pauses only between batches, before the next (`batch` counts those started), as the
        # controller's state file says it ("paused before batch 3 of 3").
        (RolloutState.PAUSED, 1, "before batch 2 of 3"),
        (RolloutState.RUNNING, 1, "batch 1 of 3"),
        (RolloutState.HALTED, 2, "batch 2 of 3"),
        (RolloutState.COMPLETED, 3, "batch 3 of 3"),
    ],
)
def test_the_rollout_says_where_it_stands_among_its_batches(
    state: RolloutState, batch: int, said: str
) -> None:
    status = RolloutStatus(state=state, batch=batch, batches=3, mode=RolloutMode.DRAIN)
    assert status.position() == said
    text = " ".join(line.strip() for line in lines_of(rollout_text(status, None, width=PANEL_WIDTH)))
    assert said in text and "batch 0" not in text, text


def test_a_rollout_before_its_start_reads_as_scheduled_with_its_start_and_plan() -> None:
    """thundering-herd's rolling restart starts at 30 s: before, the panel read "rollout running, before
    batch 1 of 16", a running rollout that had not begun. The start on the console's clock face."""
    status = RolloutStatus(
        state=RolloutState.RUNNING, batch=0, batches=16, batch_size=30, starts_at_s=30.0, started_at_s=30.0
    )
    lines = lines_of(rollout_text(status, None))
    assert lines[0] == "rollout  scheduled"
    assert lines[1].strip() == "starts at 0:00:30, 16 batches of 30"
    drill = lines_of(rollout_text(status, None, clock=lambda s: f"02:00:{s:02.0f}"))
    assert drill[1].strip() == "starts at 02:00:30, 16 batches of 30"
    begun = lines_of(rollout_text(status.model_copy(update={"starts_at_s": None, "batch": 1}), None))
    assert begun[0] == "rollout  running  batch 1 of 16"


def test_a_scheduled_rollout_from_an_older_server_reads_as_before() -> None:
    """A frame without `starts_at_s` (an older server, an older recording) decodes and reads as it did."""
    import json

    from console.client.decode import decode_message
    from tests.fleet_builders import frame

    older = frame(3.0).model_dump(mode="json")
    older["rollout"] = {"state": "running", "batch": 0, "batches": 16, "started_at_s": 30.0}
    decoded = decode_message(json.dumps(older))
    assert isinstance(decoded, Frame) and decoded.rollout is not None
    assert decoded.rollout.starts_at_s is None and not decoded.rollout.scheduled
    assert lines_of(rollout_text(decoded.rollout, None))[0] == "rollout  running  before batch 1 of 16"
