"""The storm figures `sim run` and the after-action report share (console/figures.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from console.figures import BINS_PER_S, beside_limit, headroom_pct, recovery, storm_lockstep_index


def _waves_after(disconnect_s: float, seconds: int, period_s: float) -> np.ndarray:
    """Attempts per 100 ms: a calm 10 a bin, and from the disconnect a burst of 400 every `period_s`."""
    bins = np.full(seconds * BINS_PER_S, 10, dtype=np.int64)
    t = disconnect_s
    while t < seconds:
        bins[int(t * BINS_PER_S)] = 400
        t += period_s
    return bins


def test_waves_that_never_took_connections_below_the_line_are_still_judged() -> None:
    """Reconnects came back within a frame (connections never below 95 %): recovery is 0 s, the storm
    window from it empty — the index must read the waves, not 0.0."""
    times = np.arange(1.0, 61.0)
    connections = np.full(times.size, 1000.0)
    recovery_s, recovered_at_s = recovery(connections, times, 10.0)
    assert (recovery_s, recovered_at_s) == (0.0, 10.0)
    waves = storm_lockstep_index(_waves_after(10.0, 60, 2.0), [10.0], recovered_at_s).index
    smear = storm_lockstep_index(np.full(600, 50, dtype=np.int64), [10.0], recovered_at_s).index
    assert waves is not None and waves >= 4.0 and smear == 1.0


@pytest.mark.parametrize(
    ("bins", "disconnects", "why"),
    [
        # A storm the run ends 3 s into: all of it inside the 5 s left out after the disconnect.
        (np.full(80, 5000), [5.0], "too short to judge: the storm window held no whole 2 s once the 5 s"),
        (np.full(15, 5000), [], "too short to judge: the run held no whole 2 s"),
        (np.full(600, 2), [10.0], "too quiet to judge: no 2 s window held 100 attempts"),
    ],
)
def test_a_lockstep_index_not_measured_is_none_with_why(
    bins: np.ndarray, disconnects: list[float], why: str
) -> None:
    """Review: 0.0 — "measured, smoother than a smooth smear" — for a window too short or too quiet."""
    judged = storm_lockstep_index(bins.astype(np.int64), disconnects, 59.0)
    assert judged.index is None and judged.unmeasured is not None and judged.unmeasured.startswith(why), (
        judged
    )


def test_a_measured_lockstep_index_gives_no_reason() -> None:
    judged = storm_lockstep_index(_waves_after(10.0, 60, 2.0), [10.0], 59.0)
    assert judged.index is not None and judged.unmeasured is None


def test_the_window_ends_at_recovery_when_there_is_one() -> None:
    """Waves after the recovery do not count: 30 s of smear, then waves from 40 s; recovered at 35 s."""
    bins = np.full(600, 50, dtype=np.int64)
    bins[400::20] = 2000
    assert storm_lockstep_index(bins, [10.0], 35.0).index == 1.0
    assert storm_lockstep_index(bins, [10.0], 59.0).index >= 4.0


def _outage_every(spacing: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """A fleet of 1000 that every client leaves in the second from 30 s (the event's time, the start of its
    second), back 100 a second from 41 s, all back at 50 s; seen one frame every `spacing` s from
    `offset`, as a source sped up by `spacing` sends them."""
    times = np.arange(1.0 + offset, 121.0, spacing)
    connections = np.clip((times - 40.0) * 100.0, 0.0, 1000.0)
    connections[times <= 30.0] = 1000.0
    return times, connections


@given(st.integers(min_value=1, max_value=10), st.integers(min_value=0, max_value=9))
def test_recovery_is_from_the_level_before_the_disconnect_at_any_frame_spacing(
    spacing: int, offset: int
) -> None:
    """Recorded at ×4 a regional outage read "never below 95 % of before" with connections at 0: "before"
    was the first frame after the event, which at ×4 already held the collapse. Before is the last frame at
    or before the event, whatever the frames' spacing."""
    offset %= spacing
    times, connections = _outage_every(spacing, offset)
    recovery_s, recovered_at_s = recovery(connections, times, 30.0)
    back_at = float(times[times >= 50.0][0])  # the first frame at ≥ 950 (95 % of 1000)
    assert (recovery_s, recovered_at_s) == (back_at - 30.0, back_at)


def test_recovery_has_no_level_before_a_disconnect_its_frames_begin_after() -> None:
    """A recording begun after the disconnect holds no frame of the level before it: its first frame is
    already the collapse, not the line to come back to. Given the level (`before`), it counts to that."""
    times, connections = _outage_every(1, 0)
    after = times > 35.0
    assert recovery(connections[after], times[after], 30.0) == (None, 120.0)
    assert recovery(connections[after], times[after], 30.0, before=1000.0) == (20.0, 50.0)


def test_a_storm_window_from_the_recordings_start_judges_the_waves_before_its_first_disconnect() -> None:
    """A recording begun during the storm: its waves came before the first disconnect it holds (at 40 s)."""
    bins = np.full(600, 50, dtype=np.int64)
    bins[0:300:20] = 2000  # waves for the first 30 s, a smear after
    assert storm_lockstep_index(bins, [40.0], 59.0).index == 1.0
    assert storm_lockstep_index(bins, [40.0], 59.0, from_s=0.0).index >= 4.0


def test_drain_inflow_is_accepts_over_disconnects_in_the_trailing_window() -> None:
    from console.figures import DrainInflow

    flow = DrainInflow(seconds=3)
    assert flow.ratio is None  # nothing flowed in: no backlog
    flow.add(accepts=0, disconnects=1000)  # a node dies
    flow.add(accepts=300, disconnects=0)
    assert flow.ratio == 0.3  # the storm is winning
    flow.add(accepts=300, disconnects=0)
    flow.add(accepts=400, disconnects=0)  # the death has left the window
    assert (flow.accepts, flow.inflow, flow.ratio) == (1000, 0, None)


def test_a_hinted_close_flows_in_over_its_hint_window_an_unhinted_loss_at_once() -> None:
    """A client closed with a reconnect hint of [lo, hi] is due back over that window: it joins the backlog
    then. Counted at its close, the graceful-drain scenario's 833/s drain with hints of 1–30 s read 0.21
    (and a real 5/s drain 0.091): the kill switch, for the textbook safe drain."""
    from console.figures import DrainInflow, HintedCloses, due_shares

    # Taken at the middle of its second: 1–30 s is due 0.5 s … 29.5 s on, over the next 30 seconds.
    shares = due_shares((1000, 30_000))
    assert len(shares) == 31 and shares[0] == 0.0 and shares[1] == shares[30] == pytest.approx(0.5 / 29)
    assert shares[2] == pytest.approx(1 / 29) and math.fsum(shares) == pytest.approx(1.0)
    assert due_shares((0, 0)) == (1.0,)  # told to come back now: in-flow now
    assert due_shares((4000, 4000)) == (0.0,) * 4 + (1.0,)

    drain = DrainInflow(seconds=10)
    drain.add(accepts=0, disconnects=0, hinted=[HintedCloses(2900, (1000, 30_000))])
    assert (drain.inflow, drain.ratio) == (0.0, None)  # nobody due back yet
    drain.add(accepts=50, disconnects=0)
    assert drain.inflow == pytest.approx(50) and drain.ratio is None  # 50 due back: too few to judge
    drain.add(accepts=100, disconnects=0)
    assert drain.inflow == pytest.approx(150) and drain.ratio == pytest.approx(1.0)
    for _ in range(27):
        drain.add(accepts=100, disconnects=0)  # they come back as they are due: even
    assert drain.inflow == pytest.approx(1000) and drain.ratio == 1.0
    for _ in range(11):  # the last of them were due in the drain's 31st second
        drain.add(accepts=0, disconnects=0)
    assert (drain.inflow, drain.ratio) == (0.0, None)  # nothing due beyond the hint window

    kill = DrainInflow(seconds=10)  # an abrupt restart: no hint, all of them want back at once
    kill.add(accepts=0, disconnects=2900)
    assert (kill.inflow, kill.ratio) == (2900, 0.0)


def test_a_deadlines_forced_closes_are_due_from_the_deadlines_moment() -> None:
    """A drain's deadline closes what remains at one moment, not all through the second: taken at the
    middle, 100 k forced at a second's start left ~1,700 "due" after all had come back (0.49, the kill
    switch, at the end of graceful-drain)."""
    from console.figures import DrainInflow, HintedCloses, due_shares

    assert due_shares((1000, 30_000), at_s=0.0) == (0.0,) + (pytest.approx(1 / 29),) * 29
    flow = DrainInflow(seconds=10)
    flow.add(accepts=0, disconnects=0, hinted=[HintedCloses(29_000, (1000, 30_000), at_s=0.0)])
    for _ in range(29):
        flow.add(accepts=1000, disconnects=0)
    flow.add(accepts=0, disconnects=0)
    assert (flow.accepts, flow.inflow) == (9000, pytest.approx(9000))


def test_within_hint_counts_a_drains_paced_closes_until_their_hint_runs_out() -> None:
    """The connections_drop alarm's allowance (`Totals.within_hint_clients`): clients closed at a drain's
    pace with a hint, not yet due back. At a steady rate it is the drain guard's rate × the hint's mean;
    a deadline's forced closes are not in it."""
    from console.figures import HintedCloses, WithinHint

    within = WithinHint()
    assert within.clients == 0
    for _ in range(60):  # 1000/s with hints of 1–30 s, taken at the middle of each second
        within.add([HintedCloses(1000, (1000, 30_000))])
    assert within.clients == 15_500  # rate × the hint's mean: the drain guard's offline_at_once
    within.add([HintedCloses(20_000, (1000, 30_000), at_s=0.0, forced=True)])  # the deadline: not in it
    assert within.clients == 14_500  # the second's 1000 due back left; the 20 k forced never came in
    for _ in range(29):
        within.add()  # no more closes: they come back as told
    assert within.clients == 0
    fixed = WithinHint()
    fixed.add([HintedCloses(500, (4000, 4000))])  # back 4 s on, in the 5th second from this one
    assert [fixed.clients, *(fixed.add() or fixed.clients for _ in range(4))] == [500, 500, 500, 500, 0]


def test_a_window_started_steady_reads_level_until_the_fleet_moves() -> None:
    """The simulator starts its clients connected and steady, with nobody yet in backoff: its first
    second's churn against an empty window read 0.54 (graceful-drain's kill switch at 1 s)."""
    from console.figures import DrainInflow

    flow = DrainInflow(seconds=10, steady_per_s=160)
    assert flow.ratio == 1.0
    flow.add(accepts=87, disconnects=161)  # the first churned clients still backing off
    assert flow.ratio == pytest.approx((9 * 160 + 87) / (9 * 160 + 161), abs=1e-3)
    for _ in range(9):
        flow.add(accepts=0, disconnects=2000)  # an abrupt restart, the start left behind
    assert flow.ratio == pytest.approx(87 / (161 + 9 * 2000), abs=1e-3)


def test_drain_inflow_is_none_once_fractional_rates_have_left_the_window() -> None:
    """Real nodes report rates (19.99 closes/s while draining): once they have left the window nothing
    flows, and the ratio says so — not a ratio of rounding residues (it read -4.25 on a quiet fleet)."""
    from console.figures import DrainInflow

    flow = DrainInflow(seconds=3)
    for accepts, disconnects in [(0.1, 19.99092990407766), (0.7, 0.2), (13.3, 0.3)]:
        flow.add(accepts=accepts, disconnects=disconnects)
    for _ in range(3):
        flow.add(accepts=0.0, disconnects=0.0)
    assert (flow.accepts, flow.inflow, flow.ratio) == (0.0, 0.0, None)


def test_too_few_clients_flowing_in_are_not_judged() -> None:
    """A real ~300-client fleet drained at 5/s with hints of 1–30 s: in the drain's first seconds 0.09,
    then 0.26 clients were due back, nobody had come back yet (clients are whole), and the ratio read 0 —
    the kill switch, by chance, in every one of 400 simulated drains. Under DRAIN_INFLOW_MIN_CLIENTS
    flowing in over the window the ratio is not judged; from there it is, a storm's at once."""
    from console.figures import DRAIN_INFLOW_MIN_CLIENTS, DrainInflow, HintedCloses

    flow = DrainInflow(seconds=10)
    accepts = [0, 0, 0, 1, 0, 0, 2, 0, 1, 1, 0, 2]  # whole clients, as due back give or take
    by_chance = []
    for accepted in accepts:
        flow.add(accepts=accepted, disconnects=0, hinted=[HintedCloses(5, (1000, 30_000))])
        assert flow.inflow < DRAIN_INFLOW_MIN_CLIENTS and flow.ratio is None  # too few to judge
        if flow.inflow > 0 and flow.accepts < 0.6 * flow.inflow:
            by_chance.append(round(flow.accepts / flow.inflow, 2))
    assert by_chance[0] == 0.0 and len(by_chance) >= 3  # what was judged: the kill switch, and again
    flow.add(accepts=3, disconnects=DRAIN_INFLOW_MIN_CLIENTS)  # a node dies holding that many
    assert flow.ratio is not None and flow.ratio < 0.6  # the storm is winning: judged at once


def test_headroom_with_no_node_in_rotation_is_none_spare_not_minus_100() -> None:
    """No capacity in rotation is no spare capacity: 0 %, whether or not a draining node still holds
    clients. It read -100 %, a figure no fleet can have (60 held in 100 is 40 %, 300 held in 100 is -200 %)."""
    assert headroom_pct(0, 0) == 0.0
    assert headroom_pct(50, 0) == 0.0
    assert headroom_pct(60, 100) == 40.0 and headroom_pct(110, 100) == -10.0
    # Rounded as frames carry it; unrounded as the guards judge it against a budget (34.996 is under 35).
    assert headroom_pct(65_004, 100_000) == 35.0 and headroom_pct(65_004, 100_000, places=None) < 35.0


def test_a_value_beside_its_limit_gets_the_places_that_put_it_on_its_side() -> None:
    assert beside_limit(34.6, 35.0) == "34.6"  # not "35", as if on the budget
    assert beside_limit(20.2, 35.0) == "20"  # apart at the places asked for: no more
    assert beside_limit(80.04, 80.0, 1) == "80.04"  # not "80.0" beside a line of 80
    assert beside_limit(0.598, 0.6, 2) == "0.598"
    assert beside_limit(7.0, None, 1) == "7.0"


def test_a_value_exactly_at_its_limit_reads_as_the_limit() -> None:
    """A lockstep index of exactly 4.05 fires at a limit of 4.05 (at or above); written "4.0" it read as
    under the line it fired at (and 34.5 at a 34.5 line, "34"). At the line, it reads as the line does."""
    assert beside_limit(4.05, 4.05, 1) == "4.05"
    assert beside_limit(34.5, 34.5) == "34.5"
    assert beside_limit(35.0, 35.0) == "35"  # a whole line needs no places
    assert beside_limit(0.6, 0.6, 2) == "0.60"  # and never fewer than asked for


lines = st.floats(min_value=-1e6, max_value=1e6)


@given(lines, lines, st.integers(min_value=0, max_value=3), st.lists(lines, max_size=2))
def test_a_value_beside_its_limits_reads_on_its_side_of_each(
    value: float, limit: float, decimals: int, also: list[float]
) -> None:
    shown = beside_limit(value, limit, decimals, also=also)
    places = len(shown.partition(".")[2])
    assert places >= decimals
    if places < 6:  # (past 6 places figures that close are said as equal: none such in a fleet)
        read = float(shown)
        for line in (limit, *also):
            assert (read > line) - (read < line) == (value > line) - (value < line), (value, line, shown)


def test_a_value_beside_two_lines_is_kept_on_its_side_of_both() -> None:
    # Drain ÷ inflow under its losing line (1) and its kill switch (0.6): "0.60" read as at the kill switch.
    assert beside_limit(0.599, 1.0, 2) == "0.60"
    assert beside_limit(0.599, 1.0, 2, also=[0.6]) == "0.599"
