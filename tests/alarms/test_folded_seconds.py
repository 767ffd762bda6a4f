"""A sped-up source's frames (one per wall second, each folding several fleet seconds: `fold_frames`, the
simulator backend's tick) judged by the alarms the way one frame a second is.

Found by a probe: at ×60 the engine counted two holding readings 60 s apart as 60 s held, and one
reading off clears — gitlab-reset-burst's `drain_inflow_losing` (1 fps: raised 119, cleared 137) was raised
at 120, cleared 180, raised 300, cleared 360; thundering-herd, never raised at 1 fps, got a false raise at
1380. A folded frame now carries each earlier second's totals (`Frame.folded_totals`) and the rules that
read only totals and wave bins (`Rule.each_second`) are judged second by second.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from console.alarms import AlarmEngine, FleetView
from console.alarms.engine import seconds_of
from console.alarms.rules import build_rules
from console.guards import Thresholds
from console.protocol import AdmissionSettings, Event, Frame, NodeStatus
from console.server.backend import fold_frames
from tests.fleet_builders import frame, series

#: The rules that read nodes, the rollout or admission: a folded frame shows them its last second only
#: (but what it says of each second: `folded_hot`, `paused_at_s`, drains' `started_at_s` — not in the
#: views `node_columns` gives, nor in frames without their nodes).
LAST_SECOND_ONLY = {"cpu_abort", "rollout_paused", "drain_pacing_exceeded"}

Change = tuple[float, str, str]  # (fleet time, "raised" | "cleared", alarm name)


def changes(events: list[Event]) -> list[Change]:
    return [(e.time_s, e.data["change"], e.data["name"]) for e in events]


def one_fps_and_folded(scenario_name: str, every: int) -> tuple[list[Change], list[Change]]:
    """A scenario's alarm changes judged a frame a second, and from frames folded every `every` seconds
    (what `sim serve --speed every` sends), each judged with the nodes of its last second."""
    from console.sim.engine import Simulation
    from console.sim.records import node_columns
    from console.sim.scenario_loader import load_scenario

    scenario = load_scenario(scenario_name)
    sim = Simulation(scenario, keep_history=False)
    one_fps, sped_up = AlarmEngine(), AlarmEngine()
    every_second: list[Change] = []
    folded: list[Change] = []
    pending: list[Frame] = []
    for result in sim.run(int(scenario.duration_s)):
        second = sim.frame(result, with_nodes=False)
        view = FleetView.of_columns(
            *node_columns(sim, result), sim.admission, one_fps.thresholds, one_fps.capacity
        )
        every_second += changes(one_fps.update(second, view))
        pending.append(second)
        if len(pending) == every:
            folded += changes(sped_up.update(fold_frames(pending), view))
            pending = []
    return every_second, folded


@pytest.mark.parametrize("scenario_name", ["gitlab-reset-burst", "thundering-herd", "demo"])
def test_a_sped_up_source_raises_and_clears_at_the_fleet_seconds_one_frame_a_second_does(
    scenario_name: str,
) -> None:
    every_second, folded = one_fps_and_folded(scenario_name, 60)
    judged = {name for _, _, name in every_second + folded} - LAST_SECOND_ONLY
    assert judged  # the scenario raises something a totals rule judges
    assert [c for c in folded if c[2] in judged] == [c for c in every_second if c[2] in judged]


def test_the_rules_judged_each_second_are_those_reading_only_totals_and_waves() -> None:
    each_second = {type(rule).__name__ for rule in build_rules(Thresholds()) if rule.each_second}
    assert each_second == {
        "ConnectionsDrop",
        "HeadroomLow",
        "DrainInflow",
        "LockstepWaves",
        "RateOverBaseline",
        "ResyncShare",
    }


def losing(time_s: float) -> float:
    """Drain ÷ inflow under 1 from 10 s on, but for one second at 40 s."""
    return 0.9 if time_s >= 10 and time_s != 40 else 1.2


def test_one_seconds_break_inside_a_folded_frame_restarts_the_hold() -> None:
    seconds = series(1, 120, drain_inflow_ratio=losing)
    one_fps, sped_up = AlarmEngine(), AlarmEngine()
    every_second = [c for f in seconds for c in changes(one_fps.update(f))]
    folded = [c for i in range(0, 120, 30) for c in changes(sped_up.update(fold_frames(seconds[i : i + 30])))]
    assert every_second == folded == [(101.0, "raised", "drain_inflow_losing")]  # held 41 … 101


def test_each_folded_second_is_judged_at_its_own_fleet_time_with_its_own_bins() -> None:
    seconds = [frame(t, headroom_pct=50.0 - t, attempts=[int(t)] * 10) for t in range(11, 14)]
    folded = fold_frames(seconds)
    assert folded.span_s == 3 and folded.folded_totals == [s.totals for s in seconds[:2]]
    judged = seconds_of(folded)
    assert [s.time_s for s in judged] == [11.0, 12.0, 13.0]
    assert [s.totals.headroom_pct for s in judged] == [39.0, 38.0, 37.0]
    assert [s.waves.attempts for s in judged] == [[11] * 10, [12] * 10, [13] * 10]
    assert judged[-1].nodes is folded.nodes and all(s.span_s == 1 for s in judged)


def test_a_folded_frame_without_its_seconds_totals_is_judged_as_its_last_second_as_before() -> None:
    """An older server's or recording's frame: span_s 60, no `folded_totals`."""
    seconds = series(1, 120, drain_inflow_ratio=losing)
    old = [fold_frames(seconds[i : i + 60]).model_copy(update={"folded_totals": None}) for i in (0, 60)]
    assert seconds_of(old[0]) == [old[0]]
    engine = AlarmEngine()
    assert [c for f in old for c in changes(engine.update(f))] == [(120.0, "raised", "drain_inflow_losing")]


def test_a_node_alarm_is_not_cleared_by_the_earlier_seconds_of_a_folded_frame() -> None:
    """cpu_abort is judged on each frame's last second: an earlier second, where no rule looked at the
    nodes, says nothing about it."""
    from tests.fleet_builders import nodes

    hot = nodes(4, cpu_pct=95.0)
    one_s = [frame(t, fleet=hot) for t in range(1, 32)]
    engine = AlarmEngine()
    raised = [c for f in one_s for c in changes(engine.update(f))]
    assert raised == [(31.0, "raised", "cpu_abort")]
    still_hot = fold_frames([frame(t, fleet=hot) for t in range(32, 42)])
    assert changes(engine.update(still_hot)) == []
    assert [a.name for a in engine.active] == ["cpu_abort"]


def hot_node(hot: Callable[[float], bool]) -> Callable[[float], list[NodeStatus]]:
    """Four nodes at 50 % CPU; gw-001 at 95 % in the seconds `hot` says."""
    from tests.fleet_builders import node

    def fleet(time_s: float) -> list[NodeStatus]:
        return [node(f"gw-{i:03d}", cpu_pct=95.0 if i == 1 and hot(time_s) else 50.0) for i in range(4)]

    return fleet


def judged(frames: list[Frame], engine: AlarmEngine | None = None) -> list[Change]:
    engine = engine or AlarmEngine()
    return [c for f in frames for c in changes(engine.update(f))]


def test_a_nodes_stretch_over_the_abort_line_inside_folded_frames_is_judged_at_its_fleet_seconds() -> None:
    """cpu_abort (the same node over 80 % for 30 s) from frames saying which nodes were over the line each
    second (`Frame.folded_hot`): raised and cleared at the fleet seconds one frame a second does, a
    one-second break inside a frame restarting the hold. Without the spells, at the frames' seconds."""
    fleet = hot_node(lambda t: 10 <= t < 100 and t != 25)  # held 26 … 56 s; cool from 100 s
    seconds = [frame(float(t), fleet=fleet(float(t))) for t in range(1, 181)]
    every_second = judged(seconds)
    assert every_second == [(56.0, "raised", "cpu_abort"), (104.0, "cleared", "cpu_abort")]  # clear_after_s 5

    folded = [fold_frames(seconds[i : i + 45], hot_lines=(80.0,)) for i in range(0, 180, 45)]
    assert folded[1].hot_by_second(80.0)[9] == {"gw-001"}  # 55 s
    assert judged(folded) == every_second
    assert judged([fold_frames(seconds[i : i + 45]) for i in range(0, 180, 45)]) == [
        (90.0, "raised", "cpu_abort"),  # the last seconds only: 45 s held at 90 (held since 45)
        (135.0, "cleared", "cpu_abort"),
    ]


def test_a_line_the_frame_does_not_say_is_judged_on_its_last_second_as_before() -> None:
    fleet = hot_node(lambda t: t >= 10)
    seconds = [frame(float(t), fleet=fleet(float(t))) for t in range(1, 91)]
    other_line = Thresholds(cpu_abort_pct=85.0, cpu_pause_pct=75.0)
    said = [fold_frames(seconds[i : i + 30], hot_lines=(80.0,)) for i in range(0, 90, 30)]
    unsaid = [f.model_copy(update={"folded_hot": None}) for f in said]
    assert judged(said, AlarmEngine(other_line)) == judged(unsaid, AlarmEngine(other_line))
    assert judged(said, AlarmEngine(other_line)) == [(60.0, "raised", "cpu_abort")]
    assert judged(said) == [(40.0, "raised", "cpu_abort")]  # held 10 … 40 s


def test_the_rules_judged_each_second_over_the_line_are_those_reading_only_the_hot_nodes() -> None:
    over_line = {type(rule).__name__ for rule in build_rules(Thresholds()) if rule.each_second_over_line}
    assert over_line == {"CpuAbort"}


def served(scenario: str, overrides: list[str], alarm: str, every: int, until_s: float) -> list[Change]:
    """`alarm`'s changes from `scenario` served at ×`every` (frames with their nodes, as the server sends
    them): its first frame is second 1, then one per `every` s."""
    import asyncio

    from console.server.simulator import SimulatorBackend

    backend = SimulatorBackend.from_scenario(scenario, overrides)
    engine = AlarmEngine()

    async def serve() -> list[Change]:
        await backend.start()
        frames = [(await backend.tick(1, 60.0)).frame]
        while frames[-1].time_s < until_s:
            frames.append((await backend.tick(every, 60.0)).frame)
        return [c for f in frames for c in changes(engine.update(f)) if c[2] == alarm]

    return asyncio.run(serve())


def served_rollout_paused(every: int, until_s: float) -> list[Change]:
    """demo with the outage seed's fix: pause the rollout when a surviving node runs over 75 % CPU."""
    return served("demo", ["rollout.pause_cpu_pct=75"], "rollout_paused", every, until_s)


@pytest.mark.parametrize("every", [7, 60])
def test_a_rollouts_auto_pause_raises_at_the_fleet_second_one_frame_a_second_does(every: int) -> None:
    """A folded frame shows the rollout at its last second only; the pause's fleet time
    (`RolloutStatus.paused_at_s`) dates the raise to the second it happened in (was the frame's end)."""
    one_fps = served_rollout_paused(1, 240.0)
    assert one_fps and one_fps[0][1] == "raised"
    assert served_rollout_paused(every, 240.0) == one_fps


PACING_ADMISSION = AdmissionSettings(rate_per_s=500.0, max_connections=None, retry_after_s=(1, 30))


def pacing_fleet(time_s: float) -> list[NodeStatus]:
    """Six nodes admitting 500/s each (`PACING_ADMISSION`): gw-000 draining at 400/s since 0 s, gw-001
    drained at 400/s from 15 s (the simulator starts a drain between seconds: it closes from second 16)."""
    from tests.fleet_builders import node

    def draining(node_id: str, started_at_s: float) -> NodeStatus:
        status = node(node_id, state="draining", drain_rate_per_s=400.0)
        assert status.drain is not None
        return status.model_copy(
            update={"drain": status.drain.model_copy(update={"started_at_s": started_at_s})}
        )

    gw_001 = draining("gw-001", 15.0) if time_s > 15 else node("gw-001")
    return [draining("gw-000", 0.0), gw_001, *(node(f"gw-{i:03d}") for i in range(2, 6))]


def pacing_accepts(time_s: float) -> float:
    """2200 accepts/s in seconds 5–7 and 20–22, else 1000/s."""
    return 2200.0 if 5 <= time_s <= 7 or 20 <= time_s <= 22 else 1000.0


def test_drain_pacing_inside_a_folded_frame_is_judged_at_its_fleet_seconds_from_each_drains_start() -> None:
    """At 20–22 s two drains close 800/s and the four nodes in rotation (2000/s) admit 1400/s besides
    them: 600/s spare — a breach, which a sped-up frame ending at 30 s (calm again) hid: the rule read its
    last second only. At 5–7 s only gw-000's drain was under way and gw-001 still admitted: 2500/s of
    admission, 1800/s of it besides the drain, 700/s spare over 400/s — no breach, though counting the
    frame's last-second drains and nodes in rotation there would make one."""
    seconds = series(1, 30, fleet=pacing_fleet, admission=PACING_ADMISSION, accepts_per_s=pacing_accepts)
    every_second = judged(seconds)
    assert every_second == [
        (20.0, "raised", "drain_pacing_exceeded"),
        (27.0, "cleared", "drain_pacing_exceeded"),  # clear_after_s 5 from 22 s
    ]
    assert judged([fold_frames(seconds)]) == every_second
    assert judged([fold_frames(seconds[i : i + 10]) for i in range(0, 30, 10)]) == every_second


def test_drain_pacing_over_a_drain_that_does_not_say_when_it_started_is_judged_on_the_last_second() -> None:
    """A draining node with no drain status (its closes/s stand for its rate) gives no start to count
    from: the frame is judged on its last second, as before."""
    seconds = series(1, 30, fleet=pacing_fleet, admission=PACING_ADMISSION, accepts_per_s=pacing_accepts)
    last = seconds[-1]
    unsaid = [node.model_copy(update={"drain": None, "closes_per_s": 400.0}) for node in last.nodes]
    seconds[-1] = last.model_copy(update={"nodes": unsaid})
    assert judged([fold_frames(seconds)]) == []


def ending_drain(ends: str) -> Callable[[float], list[NodeStatus]]:
    """Six nodes admitting 500/s each (`PACING_ADMISSION`); gw-000 draining at 400/s since 0 s, its status
    saying when it empties (`eta_s`): paced, it closes its last in second 25 (empty at 24.5 s); `ends` "at
    its deadline" (25 s), the simulator force-closes the rest in the second that starts there, 26. The
    next frame shows it drained, then back in rotation from 35 s."""
    from tests.fleet_builders import node

    deadline_at_s = 25.0 if ends == "at its deadline" else 600.0
    empty_at_s = 24.5 if ends == "paced" else 1000.0
    last_s = 25.0 if ends == "paced" else 26.0

    def fleet(time_s: float) -> list[NodeStatus]:
        if time_s <= last_s:
            gw_000 = node("gw-000", state="draining", drain_rate_per_s=400.0)
            assert gw_000.drain is not None
            eta_s = min(empty_at_s - time_s, deadline_at_s - time_s)
            drain = gw_000.drain.model_copy(update={"deadline_at_s": deadline_at_s, "eta_s": max(eta_s, 0.0)})
            gw_000 = gw_000.model_copy(update={"drain": drain})
        else:
            gw_000 = node("gw-000", state="drained" if time_s < 35 else "ready")
        return [gw_000, *(node(f"gw-{i:03d}") for i in range(1, 6))]

    return fleet


@pytest.mark.parametrize(("ends", "cleared_s"), [("paced", 30.0), ("at its deadline", 31.0)])
@pytest.mark.parametrize("frames_end_s", [(10, 40), (10, 25, 40), (10, 26, 40)])
def test_a_drain_that_ended_inside_a_folded_frame_counts_in_its_earlier_seconds_until_its_end(
    ends: str, cleared_s: float, frames_end_s: tuple[int, ...]
) -> None:
    """2600 accepts/s against the 2500/s the five nodes in rotation admit while gw-000 drains: a breach
    until its drain ends, cleared 5 s later. A frame ending at 40 s shows gw-000 back in rotation: its
    drain was not counted in any earlier second (its node admitting instead), and the alarm cleared at
    the frame's end, 40 s. The frame before said when the drain would end (`eta_s`, the deadline). And a
    frame with no drain under way in any of its seconds (26–40 s after a frame at 25 s showing the paced
    drain's last second) judges the alarm's clear at its own second too."""
    seconds = series(1, 40, fleet=ending_drain(ends), admission=PACING_ADMISSION, accepts_per_s=2600.0)
    every_second = judged(seconds)
    assert every_second == [
        (1.0, "raised", "drain_pacing_exceeded"),
        (cleared_s, "cleared", "drain_pacing_exceeded"),
    ]
    starts = (0, *frames_end_s[:-1])
    folded = [fold_frames(seconds[start:end]) for start, end in zip(starts, frames_end_s, strict=True)]
    assert judged(folded) == every_second


@pytest.mark.parametrize("every", [10, 60])
def test_a_served_drains_pacing_breach_raises_and_clears_at_the_fleet_seconds_one_frame_a_second_does(
    every: int,
) -> None:
    """graceful-drain under 90/s of admission a node: its batches of 2 drain at 1666/s, over the 18 nodes'
    1620/s. At ×60 it was raised at 62 s (the first frame's end) and never cleared between batches; then
    raised at 31 s and 639 s, as at one frame a second, but cleared early between them (×60: 607 s; ×10:
    632 s): batch 1's drains ended inside a frame, whose last second shows no drain to date them by. The
    frame before says when they would end (`eta_s`): cleared at 633 s, as at one frame a second."""
    one_fps = served("graceful-drain", ["admission.rate_per_s=90"], "drain_pacing_exceeded", 1, 700.0)
    assert one_fps == [
        (31.0, "raised", "drain_pacing_exceeded"),
        (633.0, "cleared", "drain_pacing_exceeded"),
        (639.0, "raised", "drain_pacing_exceeded"),
    ]
    assert (
        served("graceful-drain", ["admission.rate_per_s=90"], "drain_pacing_exceeded", every, 700.0)
        == one_fps
    )


def brief_drain(time_s: float) -> list[NodeStatus]:
    """Six nodes admitting 500/s each (`PACING_ADMISSION`); gw-001 draining at 100/s all along; gw-000's
    drain at 400/s started at 12 s (closing from second 13) and emptied it in second 18: drained, out of
    rotation, until back at 35 s. A frame of 11–20 s sees neither its start nor its end: its nodes show
    gw-000 drained, and the frame before (10 s) showed it in rotation."""
    from tests.fleet_builders import node

    gw_001 = node("gw-001", state="draining", drain_rate_per_s=100.0)
    if 12 < time_s <= 18:
        gw_000 = node("gw-000", state="draining", drain_rate_per_s=400.0)
        assert gw_000.drain is not None
        gw_000 = gw_000.model_copy(update={"drain": gw_000.drain.model_copy(update={"started_at_s": 12.0})})
    else:
        gw_000 = node("gw-000", state="drained" if 18 < time_s < 35 else "ready")
    return [gw_000, gw_001, *(node(f"gw-{i:03d}") for i in range(2, 6))]


def brief_drain_accepts(time_s: float) -> float:
    """2300 accepts/s to 18 s, then 1800/s: a breach only while both drains are under way (13–18 s) —
    2000/s of admission, 1800/s of it taken besides the drains: 200/s spare for 500/s of closes. Before
    gw-000's drain it still admitted: 2500/s, 2200/s besides gw-001's drain, 300/s spare over 100/s."""
    return 2300.0 if time_s <= 18 else 1800.0


@pytest.mark.parametrize("frames_end_s", [(10, 20, 30, 40), (11, 19, 40), (1, 40)])
def test_a_drain_that_started_and_ended_between_two_frames_is_judged_at_its_fleet_seconds(
    frames_end_s: tuple[int, ...],
) -> None:
    """docs/alarms.md said a drain that started and ended between two frames (sped-up serving) was seen by
    neither: the breach while it ran (13–18 s) raised nothing. A sped-up frame now lists the drains under
    way in its earlier seconds that are not under way at its last (`Frame.folded_drains`), each with the
    last second its node was draining: the breach raises and clears at the seconds one frame a second
    gives — and gw-000, drained at the frame's end, counts as admitting before its drain started (no false
    breach at 11–12 s)."""
    seconds = series(1, 40, fleet=brief_drain, admission=PACING_ADMISSION, accepts_per_s=brief_drain_accepts)
    every_second = judged(seconds)
    assert every_second == [
        (13.0, "raised", "drain_pacing_exceeded"),
        (23.0, "cleared", "drain_pacing_exceeded"),  # clear_after_s 5 from 18 s
    ]
    starts = (0, *frames_end_s[:-1])
    folded = [fold_frames(seconds[start:end]) for start, end in zip(starts, frames_end_s, strict=True)]
    assert any(f.folded_drains for f in folded)  # (gw-000's, in the frame folding 13–18 s)
    assert judged(folded) == every_second
    # From an older server (no `folded_drains`): the drain is seen by neither frame, as before.
    unsaid = [f.model_copy(update={"folded_drains": None}) for f in folded]
    assert judged(unsaid) != every_second


def test_a_folded_frame_lists_the_drains_its_earlier_seconds_saw_end() -> None:
    """`fold_frames` reads the drains from each second's draining nodes: gw-000's, under way 13–18 s and not
    at 20 s, is listed with its last second; gw-001's, under way at the last second, is the nodes' to say.
    A second without its nodes (a frame sent without them) cannot say: no list."""
    from console.protocol import FoldedDrain

    seconds = series(1, 20, fleet=brief_drain, admission=PACING_ADMISSION)
    assert fold_frames(seconds[10:20]).folded_drains == [
        FoldedDrain(node="gw-000", started_at_s=12.0, rate_per_s=400.0, last_s=18.0)
    ]
    assert fold_frames(seconds[0:10]).folded_drains == []  # (gw-001's: under way at 10 s too)
    assert fold_frames([fold_frames(seconds[10:15]), fold_frames(seconds[15:20])]).folded_drains == [
        FoldedDrain(node="gw-000", started_at_s=12.0, rate_per_s=400.0, last_s=18.0)
    ]
    bare = [second.model_copy(update={"nodes": []}) for second in seconds[10:20]]
    assert fold_frames(bare).folded_drains is None
    assert fold_frames(seconds[19:20]).folded_drains is None  # one second: its nodes say it


@pytest.mark.parametrize("every", [10, 60])
def test_served_drains_that_start_and_end_between_two_frames_raise_and_clear_as_at_one_frame_a_second(
    every: int,
) -> None:
    """graceful-drain on 6 small nodes under 300/s of admission a node: each batch of 2 drains at 1666/s in
    2–3 s (31–32, 43–45, 56–58 s) over the 4 other nodes' 1200/s. Served at ×60 (one frame for 2–61 s) the
    three breaches raised nothing, at ×10 the last two: neither frame's nodes showed those drains. The
    frames now list them (`folded_drains`)."""
    small = ["nodes.count=6", "clients.count=10000", "rollout.batch_size=2", "admission.rate_per_s=300"]
    one_fps = served("graceful-drain", small, "drain_pacing_exceeded", 1, 200.0)
    assert one_fps == [
        (31.0, "raised", "drain_pacing_exceeded"),
        (37.0, "cleared", "drain_pacing_exceeded"),
        (43.0, "raised", "drain_pacing_exceeded"),
        (50.0, "cleared", "drain_pacing_exceeded"),
        (56.0, "raised", "drain_pacing_exceeded"),
        (62.0, "cleared", "drain_pacing_exceeded"),
    ]
    assert served("graceful-drain", small, "drain_pacing_exceeded", every, 200.0) == one_fps
