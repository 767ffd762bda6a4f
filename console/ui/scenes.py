"""Seeded, frozen-clock states of the console: the screenshots and the snapshot tests show the same ones.

Each scene is a model fed from the synthetic fleet up to a fleet time, a theme, and the keys an operator
would press. The clock is frozen a little after the last frame, so ages and countdowns never drift.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from console.client.decode import StreamDecoder
from console.client.synthetic import SyntheticFleet
from console.model.alarm_source import console_model
from console.model.history import FleetModel
from console.model.link import LinkState, LinkStatus, Received

SCENE_SIZE = (160, 48)
_EPOCH_WALL_S = 1_800_000_000.0  # a fixed wall clock for received_at: staleness reads the same every run


def fed_model(seconds: int, storm_at_s: float | None = 40, nodes: int = 48, seed: int = 7) -> FleetModel:
    """A model that has seen `seconds` frames of the synthetic fleet (storm at `storm_at_s`)."""
    fleet = SyntheticFleet(nodes=nodes, seed=seed, storm_at_s=storm_at_s)
    decoder = StreamDecoder()
    model = console_model()
    model.apply(Received(decoder.feed(json.dumps(fleet.hello())), _EPOCH_WALL_S))
    model.apply(LinkStatus(LinkState.LIVE, at_s=_EPOCH_WALL_S))
    for second in range(1, seconds + 1):
        for raw in fleet.next_messages():
            message = decoder.feed(raw)
            assert message is not None, decoder.counts.last_reason
            model.apply(Received(message, _EPOCH_WALL_S + second))
    return model


def frozen_clock(model: FleetModel, age_s: float = 0.4) -> float:
    return (model.received_at_s or _EPOCH_WALL_S) + age_s


@dataclass(frozen=True)
class Scene:
    name: str
    seconds: int
    storm_at_s: float | None
    theme: str = "dark"
    keys: tuple[str, ...] = ()
    description: str = ""
    size: tuple[int, int] = SCENE_SIZE


#: Filter the nodes to the draining ones and open the first: the node-detail scenes' keys.
OPEN_A_DRAINING_NODE = ("slash", *"state:draining", "enter", "enter")

SCENES = (
    Scene("calm", 90, None, description="the calm fleet"),
    Scene("storm", 46, 40, description="the storm with alarms, six seconds in"),
    Scene(
        "lockstep",
        44,
        40,
        keys=("s", "s", "s", "s", "s", "s"),
        description="the wave chart in lockstep, nodes by CPU",
    ),
    Scene(
        "node-detail",
        70,
        40,
        keys=OPEN_A_DRAINING_NODE,
        description="a draining node's detail",
    ),
    Scene("light", 46, 40, theme="light", description="the light theme"),
    Scene("high-contrast", 46, 40, theme="high-contrast", description="the high-contrast theme"),
    Scene("colorblind", 46, 40, theme="colorblind", description="the colour-blind safe theme"),
    Scene("help", 20, None, keys=("question_mark",), description="the help screen"),
    Scene("storm-80x24", 46, 40, description="the storm on an 80×24 terminal", size=(80, 24)),
    Scene(
        "node-detail-80x24",
        70,
        40,
        keys=OPEN_A_DRAINING_NODE,
        description="a draining node's detail on an 80×24 terminal: its charts three at a time",
        size=(80, 24),
    ),
)
SCENES_BY_NAME = {scene.name: scene for scene in SCENES}


def scene_app(scene: Scene):
    from console.ui.app import ConsoleApp

    model = fed_model(scene.seconds, scene.storm_at_s)
    now_s = frozen_clock(model)
    return ConsoleApp(model=model, theme_name=scene.theme, clock=lambda: now_s, remember_theme=False)
