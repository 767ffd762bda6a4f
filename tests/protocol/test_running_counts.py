"""The running counts of a frame's totals (`*_total`): optional, added to v1 without breaking a reader."""

from __future__ import annotations

from console.protocol import API_VERSION, TOTAL_COUNTERS, Frame, Totals

#: A v1 frame as a server without running counts sends it (and as older recordings hold it).
OLD_FRAME = {
    "type": "frame",
    "api_version": "v1",
    "seq": 7,
    "epoch": "e1",
    "time_s": 70.0,
    "nodes": [],
    "totals": {
        "connections": 10,
        "attempts_per_s": 5.0,
        "accepts_per_s": 4.0,
        "rejects_per_s": 1.0,
        "headroom_pct": 50.0,
        "drain_inflow_ratio": None,
    },
    "waves": {"bin_ms": 100, "attempts": [0] * 10},
    "span_s": 10.0,
}


def test_a_frame_without_running_counts_still_reads_and_leaves_them_null() -> None:
    frame = Frame.model_validate(OLD_FRAME)
    assert frame.api_version == API_VERSION == "v1"
    assert all(getattr(frame.totals, name) is None for name in TOTAL_COUNTERS)


def test_every_running_count_adds_up_a_rate_of_the_totals_and_round_trips() -> None:
    fields = Totals.model_fields
    assert sorted(TOTAL_COUNTERS) == sorted(name for name in fields if name.endswith("_total"))
    assert all(rate in fields and rate.endswith("_per_s") for rate in TOTAL_COUNTERS.values())
    counted = dict(OLD_FRAME, totals={**OLD_FRAME["totals"], **dict.fromkeys(TOTAL_COUNTERS, 12)})  # type: ignore[dict-item]
    frame = Frame.model_validate_json(Frame.model_validate(counted).model_dump_json())
    assert frame.totals.rejects_total == 12 and frame.totals.abnormal_closes_total == 12
