"""console.sim.records directly: the per-node history ring, and records made from a second's arrays."""

from __future__ import annotations

import numpy as np

from console.protocol import NodeState
from console.sim import kernel as k
from console.sim.engine import Simulation
from console.sim.records import HISTORY_S, NodeHistory
from console.sim.scenario_loader import load_scenario


def second(value: float, nodes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    out = np.full((k.ON_FIELDS, nodes), value)
    return out, np.full(nodes, value * 10), np.full(nodes, k.READY, dtype=np.float64)


def test_the_ring_keeps_the_last_seconds_oldest_first() -> None:
    history = NodeHistory(columns=3)
    for t in range(HISTORY_S + 5):
        history.record(*second(float(t), 3))
    values, states = history.of_node(1)
    assert values.shape == (k.ON_FIELDS + 1, HISTORY_S) and states.shape == (HISTORY_S,)
    assert values[k.ON_ATTEMPTS, 0] == 5.0 and values[k.ON_ATTEMPTS, -1] == HISTORY_S + 4.0
    assert values[k.ON_FIELDS, -1] == (HISTORY_S + 4.0) * 10  # connections, the last row
    assert (states == k.READY).all()


def test_widening_keeps_what_was_recorded_and_new_nodes_start_empty() -> None:
    history = NodeHistory(columns=2)
    history.record(*second(7.0, 2))
    history.widen(4)
    history.record(*second(8.0, 4))
    assert history.of_node(0)[0][k.ON_CPU].tolist() == [7.0, 8.0]
    assert history.of_node(3)[0][k.ON_CPU].tolist() == [0.0, 8.0]


def test_a_copy_without_values_is_empty_and_independent() -> None:
    history = NodeHistory(columns=2)
    history.record(*second(1.0, 2))
    empty = history.copy(with_values=False)
    full = history.copy()
    assert empty.of_node(0)[0].shape[1] == 0 and empty.columns == 2
    full.record(*second(2.0, 2))
    assert history.length == 1 and full.length == 2


def test_a_frame_shows_a_drain_with_its_progress_and_the_snapshot_the_state_now() -> None:
    sim = Simulation(load_scenario("graceful-drain", ["rollout.start_at_s=9999", "nodes.count=4"]))
    sim.step()
    sim.drain("gw-001", rate_per_s=100.0, deadline_s=60.0, hint_ms=(1000, 2000))
    # Before the next second: the snapshot already shows the drain (the guards judge against it).
    live = {n.id: n for n in sim.live_snapshot().nodes}
    assert live["gw-001"].state is NodeState.DRAINING
    frame = sim.frame(sim.step())
    node = next(n for n in frame.nodes if n.id == "gw-001")
    assert node.drain is not None and node.drain.rate_per_s == 100.0
    assert node.drain.remaining == node.connections and node.drain.deadline_at_s == 61.0
    assert node.drain.eta_s == min(node.connections / 100.0, 61.0 - frame.time_s)  # the deadline decides
    assert all(n.drain is None for n in frame.nodes if n.id != "gw-001")


def test_the_nodes_as_columns_give_the_alarm_rules_what_the_frame_gives_them() -> None:
    """`sim run` judges alarms from columns, not 680 node records a second: the same view, second by
    second, through a rolling restart (hot nodes), a drain and an admission limit on some nodes."""
    from dataclasses import replace

    from console.alarms import FleetView
    from console.guards import Thresholds
    from console.protocol import AdmissionSettings
    from console.sim.records import node_columns

    # Two batches of 30: the first's restart makes the rest hot; the drained node is in the second, so its
    # drain runs its course (an abrupt batch restarts a draining node of its own, as the controller does).
    sim = Simulation(load_scenario("thundering-herd", ["clients.count=200000", "nodes.count=60"]))
    thresholds = Thresholds()
    checked = 0
    for second, result in enumerate(sim.run(240)):
        if second == 20:
            sim.drain("gw-045", rate_per_s=50.0, deadline_s=120.0, hint_ms=(1000, 5000))
            limited = ["gw-001", "gw-002"]
            # A per-node change keeps the fleet's Retry-After window (the kernel's is fleet-wide).
            window = sim.admission.retry_after_s
            sim.set_admission(
                AdmissionSettings(rate_per_s=500.0, max_connections=None, retry_after_s=window, nodes=limited)
            )
        whole = FleetView.of(sim.frame(result), thresholds, None)
        columns = FleetView.of_columns(*node_columns(sim, result), sim.admission, thresholds, None)
        # The drains' starts and ends (`drains`) judge a sped-up frame's earlier seconds; `sim run` judges
        # one second a frame and gives none — the rest of the view must be the same.
        assert columns.drains is None or columns.drains == whole.drains, second
        assert replace(columns, drains=whole.drains) == whole, second
        checked += bool(whole.hot_nodes) + bool(whole.draining_nodes)
    assert checked > 50  # hot and draining seconds were among those compared


def test_sim_run_fires_the_same_alarms_with_and_without_writing_frames(tmp_path) -> None:
    """With --frames the alarms read whole frames; without, the nodes as columns: one summary."""
    from console.cli.sim import run_scenario

    columns = run_scenario("demo", [], None, 120)
    whole = run_scenario("demo", [], None, 120, tmp_path / "frames.jsonl")
    columns.pop("wall_s"), whole.pop("wall_s")
    assert columns == whole and len(whole["alarms_fired"]) >= 3


def test_sim_run_frames_write_each_second_s_events_before_its_frame(tmp_path) -> None:
    """Review: a second's events were written after the next second's frame — the rollout's batch 1 at
    30.0 after frame 31, which already showed batch 1 — so a reader going through the file in order saw
    effects before causes. As `sim serve` streams a second: the simulator's events of the second (stamped
    with its start), its frame, then the alarms judged on that frame (stamped with the frame's time)."""
    import json

    from console.cli.sim import run_scenario

    path = tmp_path / "frames.jsonl"
    run_scenario("graceful-drain", [], None, 45, path)  # its rollout starts at 30 s
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    frame_s: float | None = None  # the time of the frame last written
    for record in records:
        if record["type"] == "frame":
            frame_s = record["time_s"]
        elif record["kind"] == "alarm":
            assert record["time_s"] == frame_s, record  # judged on the frame just written
        else:  # the second before the next frame's: the frames already written end at its start at most
            assert frame_s is None or frame_s <= record["time_s"], (frame_s, record)
    times = [record["time_s"] for record in records]
    assert times == sorted(times)
    batch = next(
        i for i, r in enumerate(records) if r["type"] == "event" and r["message"].startswith("batch 1/")
    )
    shows_it = next(i for i, r in enumerate(records) if r["type"] == "frame" and r["rollout"]["batch"] == 1)
    assert records[batch]["time_s"] == 30.0 and records[shows_it]["time_s"] == 31.0
    assert batch < shows_it
