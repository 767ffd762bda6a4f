"""Real simulator frames for the recording tests: a small regional outage, generated once per session."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from console import __version__
from console.protocol import Event, Frame, Source
from console.record.records import RecordingHeader

#: A regional outage small enough to run in a second: 8 nodes, 20 000 clients, every node restarted at 30 s.
OUTAGE_OVERRIDES = ["clients.count=20000", "nodes.count=8", "events.0.nodes=8", "duration_s=120"]
OUTAGE_SECONDS = 90


@dataclass(frozen=True)
class Tick:
    frame: Frame
    events: list[Event]


@pytest.fixture(scope="session")
def outage_ticks() -> list[Tick]:
    from console.sim.engine import Simulation
    from console.sim.scenario_loader import load_scenario

    sim = Simulation(load_scenario("regional-outage", OUTAGE_OVERRIDES))
    ticks = []
    for _ in range(OUTAGE_SECONDS):
        frame, events = sim.advance()
        ticks.append(Tick(frame, events))
    return ticks


def header(**fields: object) -> RecordingHeader:
    values: dict[str, object] = {
        "stormdeck_version": __version__,
        "fleet": "test-fleet",
        "source": Source.SIMULATOR,
        "started_unix_s": 1_800_000_000.0,
        "scenario": "regional-outage",
        "seed": 2,
    }
    values.update(fields)
    return RecordingHeader.model_validate(values)


def record_a_restart(path: Path, ticks: list[Tick], before: int, after: int, epoch: str) -> list[Frame]:
    """A recording of `before` frames, then the source restarting (a new `epoch`, its fleet time from 1
    again) for `after` more; returns those restarted frames."""
    from console.record.writer import RecordingWriter

    restarted = [t.frame.model_copy(update={"epoch": epoch}) for t in ticks[:after]]
    with RecordingWriter(path, header(), fsync=False) as writer:
        for tick in ticks[:before]:
            writer.write(tick.frame)
        for frame in restarted:
            writer.write(frame)
    return restarted


@pytest.fixture
def recording_path(tmp_path: Path) -> Path:
    return tmp_path / "session.sdrec"
