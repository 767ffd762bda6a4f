"""Hypothesis-fuzzed messages into the decoder and the model: nothing crashes, every bad one is counted."""

from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.client.decode import StreamDecoder
from console.client.synthetic import SyntheticFleet
from console.model import FleetModel, NodeQuery, Received, fleet_gauges, select_nodes
from console.protocol import Frame
from console.ui.charts import connections_spec, wave_spec
from console.ui.themes import load_themes
from console.ui.widgets.header import header_text

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PALETTE = load_themes()["dark"].palette

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats()  # NaN and ±Infinity too: Python's json writes them, and a frame must not carry them
    | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


def base_frame() -> dict:
    fleet = SyntheticFleet(nodes=3, storm_at_s=2)
    fleet.next_frame()
    return fleet.next_frame()


BASE = base_frame()


def paths(value, prefix=()):
    """Every path into a JSON value (dict keys and list indexes)."""
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from paths(child, (*prefix, index))


PATHS = [p for p in paths(BASE) if p]


def mutate(frame: dict, path: tuple, value, delete: bool) -> dict:
    out = copy.deepcopy(frame)
    parent = out
    for part in path[:-1]:
        parent = parent[part]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return out


def feed_and_render(raws: list[str | bytes]) -> tuple[StreamDecoder, FleetModel]:
    decoder = StreamDecoder()
    model = FleetModel()
    model.apply(Received(decoder.feed(json.dumps(SyntheticFleet(nodes=3).hello())), 0.0))
    for i, raw in enumerate(raws):
        message = decoder.feed(raw)
        if message is not None:
            model.apply(Received(message, float(i)))
        # what the screens read after every message must survive whatever the model took in
        fleet_gauges(model)
        wave_spec(model, 60)
        connections_spec(model, 60)
        select_nodes(model.nodes.values(), NodeQuery("cpu_pct", True), model.thresholds)
        header_text(model, float(i) + 0.5, PALETTE)
    return decoder, model


@FUZZ
@given(st.lists(st.text(max_size=200) | st.binary(max_size=200), max_size=5))
def test_arbitrary_text_and_bytes(raws):
    decoder, _ = feed_and_render(raws)
    assert decoder.counts.decoded + decoder.counts.malformed == len(raws) + 1


@FUZZ
@given(st.lists(json_values, max_size=5))
def test_arbitrary_json(values):
    raws = [json.dumps(v) for v in values]
    decoder, _ = feed_and_render(raws)
    # only a JSON object with a valid "type" and every required field is a message; these almost never are
    assert decoder.counts.decoded + decoder.counts.malformed == len(raws) + 1


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(PATHS), json_values, st.booleans()), min_size=1, max_size=6))
def test_mutated_frames(mutations):
    raws = []
    for seq, (path, value, delete) in enumerate(mutations, start=1):
        frame = mutate(BASE, path, value, delete)
        if path[0] != "seq":
            frame["seq"] = seq
        raws.append(json.dumps(frame))
    decoder, model = feed_and_render(raws)
    assert decoder.counts.decoded + decoder.counts.malformed == len(raws) + 1
    assert model.frames_applied <= decoder.counts.decoded


def test_a_valid_frame_decodes_and_every_hand_made_bad_one_is_counted():
    decoder = StreamDecoder()
    assert isinstance(decoder.feed(json.dumps(BASE)), Frame)
    bad = [
        mutate(BASE, ("totals", "connections"), -1, False),
        mutate(BASE, ("nodes", 0, "cpu_pct"), "hot", False),
        mutate(BASE, ("waves", "attempts"), [1, -5], False),
        mutate(BASE, ("nodes", 0, "state"), "on_fire", False),
        mutate(BASE, ("time_s",), None, False),
        mutate(BASE, ("nodes", 1, "handshake_p99_ms"), float("nan"), False),
        mutate(BASE, ("totals", "headroom_pct"), float("inf"), False),
    ]
    for frame in bad:
        assert decoder.feed(json.dumps(frame)) is None
    assert decoder.feed(b"\xff\xfe") is None
    assert decoder.counts.malformed == len(bad) + 1
    assert decoder.counts.decoded == 1
