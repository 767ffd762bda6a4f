"""The first row of gauges in a meltdown: handshake timeouts said, headroom that counts saturated CPU, and
no "steady" rate learned from the storm.

Reviewer's drill (regional-outage at 02:02:41, attached after the power cut): "✓ 44.4k 1.0× steady
(42.8k/s)", "✓ 9.1k · 0 503 share 0.0 %", headroom "✓ 97 %" — while every node read 100 % CPU with ~35k
handshake timeouts a second, shown nowhere in the top row."""

from __future__ import annotations

from console.model import FleetModel, Level, Received, fleet_gauges
from console.model.gauges import BRIEF_CELLS, Gauge
from tests.fleet_builders import HOT, MELTDOWN, series


def gauges_after(*spells: dict, fleet=None) -> dict[str, Gauge]:
    model = FleetModel()
    start = 60.0
    for totals in spells:
        for frame in series(start, 40, fleet=fleet, **totals):
            model.apply(Received(frame, frame.time_s))
        start += 40
    return {gauge.key: gauge for gauge in fleet_gauges(model)}


def test_a_meltdown_seen_from_attach_shows_its_timeouts_and_no_steady_rate() -> None:
    gauges = gauges_after(MELTDOWN, fleet=HOT)
    attempts = gauges["attempts"]
    assert "steady" not in attempts.detail and attempts.level is not Level.OK
    assert "no calm second" in attempts.detail, attempts.detail
    accepts = gauges["accepts"]
    assert accepts.level is Level.CRITICAL
    assert accepts.detail == "t/o 35.3k/s (79.4 %) · 503s 0.0 %", accepts.detail
    assert accepts.wide == ("t/o 35.3k/s · 503s 0.0 %", "t/o 35.3k/s (79.4 %)")  # 160, 120 columns
    assert accepts.brief == "t/o 35.3k/s" and len(accepts.brief) <= BRIEF_CELLS


def test_headroom_is_the_room_the_cpu_leaves_when_that_is_less() -> None:
    headroom = gauges_after(MELTDOWN, fleet=HOT)["headroom"]
    assert headroom.value == "0 %" and headroom.level is Level.CRITICAL
    assert "CPU 100 %" in headroom.detail and headroom.brief == "CPU 100 %"
    # a calm fleet at 30 % CPU keeps its connection headroom, said as before
    calm = gauges_after({"headroom_pct": 50.0})["headroom"]
    assert (calm.value, calm.detail, calm.brief) == ("50 %", "warn 50 % · budget 35 %", "budget 35 %")


def test_timeouts_under_a_worse_503_share_come_second() -> None:
    shedding = {
        "attempts_per_s": 1000.0,
        "accepts_per_s": 100.0,
        "rejects_per_s": 880.0,
        "timeouts_per_s": 20.0,
    }
    accepts = gauges_after(shedding)["accepts"]
    assert accepts.detail == "503 share 88.0 % · t/o 20/s", accepts.detail
    assert accepts.brief == "503s 88.0 %"
    # none timing out: as before
    calm = gauges_after({})["accepts"]
    assert (calm.detail, calm.brief, calm.level) == ("503 share 0.0 %", "503s 0.0 %", Level.OK)


def test_503s_the_operators_admission_turns_away_warn_and_say_so() -> None:
    """Review: the drill's fix — admission at 400/s a node in a storm — turned 91 % of the attempts away, as
    meant, and the 503 gauge stayed ✖ critical: "did the fix not work?". Under admission in force the 503
    share warns at most, and says whose the 503s are; without one, it is critical as before."""
    from console.protocol import AdmissionSettings

    shedding = {"attempts_per_s": 1000.0, "accepts_per_s": 90.0, "rejects_per_s": 910.0}
    limited = AdmissionSettings(rate_per_s=400.0, burst=400, max_connections=None, retry_after_s=(1, 30))
    under_admission = gauges_after(shedding | {"admission": limited})["accepts"]
    assert under_admission.level is Level.WARNING
    assert under_admission.detail == "503 share 91.0 % by admission", under_admission.detail
    assert under_admission.brief == "503s 91.0 %"
    unlimited = gauges_after(shedding | {"admission": AdmissionSettings.unlimited()})["accepts"]
    assert unlimited.level is Level.CRITICAL and unlimited.detail == "503 share 91.0 %"
    unsaid = gauges_after(shedding)["accepts"]  # a source that says nothing of admission
    assert unsaid.level is Level.CRITICAL
    # timeouts are no one's choice: critical whatever admission is in force
    melting = shedding | {"accepts_per_s": 40.0, "timeouts_per_s": 50.0, "admission": limited}
    assert gauges_after(melting)["accepts"].level is Level.CRITICAL


def test_a_nodes_503s_under_its_own_admission_warn_at_most() -> None:
    """The node table and a node's screen: under the fleet's admission every node read ✖ for its 503s, and
    the hot node among them did not stand out. A node whose admission limits nothing stays critical."""
    from console.model.gauges import node_level, shedding_nodes
    from console.protocol import AdmissionSettings
    from tests.fleet_builders import frame, node

    shed = {"attempts_per_s": 1000.0, "accepts_per_s": 90.0, "rejects_per_s": 910.0}
    fleet = [node("gw-000", **shed), node("gw-001", **shed), node("gw-002", cpu_pct=95.0, **shed)]
    limited = AdmissionSettings(rate_per_s=400.0, burst=400, max_connections=None, retry_after_s=(1, 30))
    unlimited_there = AdmissionSettings.unlimited().model_copy(update={"nodes": ["gw-001"]})
    seen = frame(100.0, fleet=fleet, admission=limited).model_copy(
        update={"admission_overrides": [unlimited_there]}
    )
    assert shedding_nodes(seen) == {"gw-000", "gw-002"}
    t = FleetModel().thresholds
    levels = {n.id: node_level(n, t, n.id in shedding_nodes(seen)) for n in fleet}
    assert levels == {"gw-000": Level.WARNING, "gw-001": Level.CRITICAL, "gw-002": Level.CRITICAL}  # CPU 95 %
    assert shedding_nodes(frame(100.0, fleet=fleet)) == frozenset()  # a frame that says nothing of admission
