"""The header's gauges, derived from the model: a value, a short detail and a level each."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from console.alarms.base import AlarmName
from console.alarms.tracking import unhinted_attempts_per_s
from console.figures import beside_limit
from console.model.history import ConnectionsChange, ConnectionsDrop, FleetModel
from console.model.thresholds import GaugeThresholds, Level
from console.model.units import FLEET_CLOCK, ClockFace, human_count
from console.protocol import (
    AdmissionInForce,
    AdmissionSettings,
    Alarm,
    Frame,
    NodeState,
    NodeStatus,
    Totals,
)


@dataclass(frozen=True)
class Gauge:
    key: str
    label: str
    value: str
    detail: str
    level: Level
    spark: tuple[float, ...] = ()
    #: Between the detail and the brief, for a box too narrow for the one and wide enough for more than the
    #: other (a 120- or 160-column terminal's 20 or 28 cells): tried in order before the brief.
    wide: tuple[str, ...] = ()
    #: The detail in fewer cells, for a box too narrow for it (an 80-column terminal's 12): what matters
    #: most of it, not its first characters.
    brief: str = ""
    #: Shorter still, for a box too narrow for the brief: tried in order, a figure never cut.
    fallbacks: tuple[str, ...] = ()
    #: The label in a narrow box's title (10 cells at 80 columns): "accepts/s…" hid what the second figure is.
    short_label: str = ""
    #: The last frame's value, too old to judge (`FleetModel.stale_s`): drawn dimmed, with no level.
    stale: bool = False


def level_at_least(value: float, warn: float, crit: float) -> Level:
    """For readings that are bad when high."""
    return Level.CRITICAL if value >= crit else Level.WARNING if value >= warn else Level.OK


def level_over(value: float, warn: float, crit: float) -> Level:
    """For readings bad when over their line, as an alarm held over its limit says it (a drop "more than
    5 %": exactly 5.0 raises nothing)."""
    return Level.CRITICAL if value > crit else Level.WARNING if value > warn else Level.OK


def level_at_most(value: float, warn: float, crit: float) -> Level:
    """For readings that are bad when low."""
    return Level.CRITICAL if value < crit else Level.WARNING if value < warn else Level.OK


def fleet_gauges(
    model: FleetModel, now_s: float | None = None, clock: ClockFace = FLEET_CLOCK
) -> list[Gauge]:
    """The five gauges; at `now_s` past the stale line, each keeps its value but says how old it is
    instead of a level (a ✓ from a frame 12 s old read as a healthy fleet), as of `clock`'s time."""
    gauges = _frame_gauges(model)
    age = None if now_s is None else model.stale_s(now_s)
    if age is None or model.frame is None:
        return gauges
    as_of = clock.text(model.frame.time_s)
    return [
        replace(
            gauge,
            detail=f"stale {int(age)} s · as of {as_of}",
            brief=f"stale {int(age)} s",
            level=Level.UNKNOWN,
            stale=True,
        )
        for gauge in gauges
    ]


#: Each gauge's label in 10 cells; the ones that fit are their own short label.
#: Clients 60 s ago below which the change is said as a count only: a share of a fleet coming up from 0
#: (a loopback fleet's "+300 (+0.0 %)") or from a handful says nothing, and under 100 one client is
#: more than the tenth of a percent the share is written to.
SHARE_MIN_BASE_CLIENTS = 100


def connections_change_texts(change: ConnectionsChange) -> list[str]:
    """Δ60s of the connections, longest first: the count and the share; the share alone (what the
    alarm's 5 % is of); the count alone. From a base too small for a share, the count and the base."""
    count = f"{_sign(change.delta)}{human_count(abs(change.delta))}"
    if change.base < SHARE_MIN_BASE_CLIENTS:
        return [f"Δ60s {count} (from {human_count(change.base)})", f"Δ60s {count}"]
    # Past 100 % a tenth of a percent is noise, and "+177.8 %" no longer fit a 12-cell box.
    pct = f"{_sign(change.pct)}{abs(change.pct):.{1 if abs(change.pct) < 100 else 0}f} %"
    return [f"Δ60s {count} ({pct})", f"Δ60s {pct}", f"Δ60s {count}"]


def connections_drop_texts(drop: ConnectionsDrop, window_s: float) -> list[str]:
    """The connections' fall under their window's peak, longest first, as the connections_drop alarm
    judges it: "43.4 % under 60 s peak 3.0k", "peak −43.4 %" (a gauge's 12 cells), "−43.4 %"."""
    pct = f"{drop.pct:.1f} %"
    return [
        f"{pct} under {window_s:g} s peak {human_count(drop.peak)}" + within_hint_text(drop.within_hint),
        f"peak −{pct}",
        f"−{pct}",
    ]


CONNECTIONS_DROP = AlarmName.CONNECTIONS_DROP.value


def _connections_drop_alarm(model: FleetModel) -> Alarm | None:
    """The connections_drop alarm while it is up (raised, or held while it clears), else None."""
    return next((e.alarm for e in model.alarms.active() if e.alarm.name == CONNECTIONS_DROP), None)


def alarm_drop_texts(alarm: Alarm, window_s: float) -> tuple[str, str, str]:
    """The connections gauge's detail, brief and middle form (`Gauge.wide`) while the connections_drop alarm
    is up and the frames no longer show its drop: the alarm's last reading that held, and whether it is
    clearing."""
    pct = f"{alarm.value or 0.0:.1f} %"
    if alarm.clearing_since_s is not None:
        return f"alarm: fell {pct} in {window_s:g} s, clearing", "clearing", f"clearing, was −{pct}"
    return f"alarm: fell {pct} in {window_s:g} s", f"−{pct}", f"alarm: −{pct}"


def within_hint_text(within_hint: float) -> str:
    """What the connections gauge's longest detail adds while drained clients are within their hint: the
    alarm counts them as held, so a fall of the connections that far reads green ("Δ60s −15.0k (−15.0 %),
    15.0k within hint") and a drop is said beyond them."""
    return f", {human_count(within_hint)} within hint" if within_hint >= 1 else ""


SHORT_LABELS = {
    "connections": "conns",
    "attempts": "attempts/s",
    "accepts": "acc · 503",
    "headroom": "headroom",
    "drain_inflow": "drain÷in",
}


def _frame_gauges(model: FleetModel) -> list[Gauge]:
    t = model.thresholds
    frame = model.frame
    if frame is None:
        return [
            Gauge(
                key, label, "—", "waiting for the first frame", Level.UNKNOWN, short_label=SHORT_LABELS[key]
            )
            for key, label in (
                ("connections", "connections"),
                ("attempts", "attempts/s"),
                ("accepts", "accepts/s · 503/s"),
                ("headroom", "headroom"),
                ("drain_inflow", "drain÷inflow"),
            )
        ]
    totals = frame.totals
    spark = model.totals.connections.values()[-60:]
    delta = model.connections_delta_60s()
    drop = model.connections_drop()
    if delta is None or drop is None:
        conn = Gauge("connections", "connections", human_count(totals.connections), "Δ60s —", Level.OK)
    else:
        # The level is the alarm's drop (under the window's peak, over the line as the alarm says it); while
        # that drop is worth a colour the detail says it from the peak, else the change over 60 s.
        level = level_over(drop.pct, t.connections_drop_warn_pct, t.connections_drop_crit_pct)
        wide = ""
        alarm = _connections_drop_alarm(model)
        if alarm is not None and level < Level.CRITICAL:
            # The alarm is up where the frames no longer show its drop: it clears only once false for
            # clear_after_s, and at speed it judges the seconds a frame folds in. Green beside it read as a
            # fleet whole again at 45 % of its connections (socketio-lockstep, trainee reviewer).
            level, (*texts, wide) = Level.CRITICAL, alarm_drop_texts(alarm, t.connections_drop_window_s)
        elif level is Level.OK:
            texts = connections_change_texts(delta)
            texts[0] += within_hint_text(drop.within_hint)
            if drop.within_hint >= 1 and len(texts) > 2:
                # A 160-column box (28 cells) showed "Δ60s −62.3 %" in green with no reason (review): the
                # share and the clients on their hint fit it.
                wide = f"{texts[1]}, {human_count(drop.within_hint)} on hint"
        else:
            texts = connections_drop_texts(drop, t.connections_drop_window_s)
        detail, *shorter = texts
        conn = Gauge(
            "connections",
            "connections",
            human_count(totals.connections),
            detail,
            level,
            tuple(float(v) for v in spark[~np.isnan(spark)]),
            wide=(wide,) if wide else (),
            brief=shorter[0] if shorter else "",
            fallbacks=tuple(shorter[1:]),
        )
    attempts = _attempts_gauge(model, totals)
    accepts = _accepts_gauge(totals, t, admission_sheds(frame))
    headroom = _headroom_gauge(frame, t)
    drain = _drain_inflow_gauge(totals.drain_inflow_ratio, model.drain_inflow_under_s, t)
    return [
        replace(gauge, short_label=SHORT_LABELS[gauge.key])
        for gauge in (conn, attempts, accepts, headroom, drain)
    ]


def _drain_inflow_gauge(ratio: float | None, under_s: float | None, t: GaugeThresholds) -> Gauge:
    """Drain ÷ inflow against the kill switch, critical at once as its alarm; losing ground (under the
    warning line) warns once held as long as drain_inflow_losing holds it (`FleetModel.drain_inflow_under_s`),
    and says how long it has held until then — a steady fleet's ratio is under 1 half its seconds by
    chance (its churn comes back as fast as it leaves only on average), and read "▲ 0.99" with no alarm."""
    if ratio is None:  # fewer clients flowed in over the window than `figures.DRAIN_INFLOW_MIN_CLIENTS`
        return Gauge("drain_inflow", "drain÷inflow", "—", "too few to judge", Level.OK, brief="too few")
    value = beside_limit(ratio, t.drain_inflow_crit, 2, also=[t.drain_inflow_warn])
    kill = (f"kill switch {t.drain_inflow_crit:.1f}", f"kill at {t.drain_inflow_crit:.1f}")
    if ratio < t.drain_inflow_crit or under_s is None:
        level = Level.CRITICAL if ratio < t.drain_inflow_crit else Level.OK
        return Gauge("drain_inflow", "drain÷inflow", value, kill[0], level, brief=kill[1])
    under = f"under {t.drain_inflow_warn:g} for {under_s:.0f} s"
    losing = under_s >= t.drain_inflow_losing_for_s
    return Gauge(
        "drain_inflow",
        "drain÷inflow",
        value,
        f"losing ground: {under}" if losing else f"{under} (alarm at {t.drain_inflow_losing_for_s:.0f} s)",
        Level.WARNING if losing else Level.OK,
        wide=(under,),
        brief=f"<{t.drain_inflow_warn:g} for {under_s:.0f} s",
    )


def _attempts_gauge(model: FleetModel, totals: Totals) -> Gauge:
    """Attempts against the calm rate; with none learned, whether it is learning one or has seen no calm
    second yet (a console attached mid-storm: the storm is no steady rate to judge it by). Judged, as the
    reconnect_rate_high alarm judges them, beyond the drained clients back on their hint
    (`unhinted_attempts_per_s`): a paced drain's reconnects are no storm, and the gauge said "35× steady"
    in red beside a silent alarm. The value is every attempt; the detail says how many came back on a hint."""
    t = model.thresholds
    baseline = model.baseline_attempts_per_s
    value = human_count(totals.attempts_per_s)
    if baseline is None and not model.calm_seen:
        return Gauge(
            "attempts", "attempts/s", value, "no calm second to judge by", Level.UNKNOWN, brief="no calm yet"
        )
    if baseline is None:
        return Gauge(
            "attempts",
            "attempts/s",
            value,
            f"learning steady rate ({t.baseline_learn_s:.0f} s)",  # 27 cells: whole in a 160-column gauge
            Level.UNKNOWN,
            brief="learning",
        )
    times = unhinted_attempts_per_s(totals) / baseline
    # The floor said as the floor: a quiet fleet's 0/s read "0.0× steady (10/s)", a rate nobody had seen.
    steady_word = "floor" if model.baseline_at_floor else "steady"
    steady = f"{times:.1f}× {steady_word} ({human_count(baseline)}/s)"
    returned = totals.hinted_returns_per_s or 0.0
    on_hint = f"{human_count(returned)}/s on hint" if returned >= 1 else ""
    return Gauge(
        "attempts",
        "attempts/s",
        value,
        f"{steady}, {on_hint}" if on_hint else steady,
        level_at_least(times, t.attempts_warn_x, t.attempts_crit_x),
        wide=(f"{times_text(times)}× {steady_word}, {on_hint}", steady) if on_hint else (),
        brief=f"{times_text(times)}× {steady_word}",
    )


def shedding_nodes(frame: Frame | None) -> frozenset[str]:
    """The nodes whose admission in force limits something (`admission_sheds`): their 503s are what it was
    set for, and warn at most (`rejects_level`)."""
    in_force = AdmissionInForce.of(frame) if frame is not None else None
    if in_force is None:
        return frozenset()
    return frozenset(node.id for node in frame.nodes if _limits(in_force.for_node(node.id)))


def _limits(settings: AdmissionSettings) -> bool:
    return settings.rate_per_s is not None or settings.max_connections is not None


def rejects_level(node: NodeStatus, t: GaugeThresholds, shedding: bool = False) -> Level:
    """A node's 503 share as a level; `shedding`: its admission limits something — it warns at most, as
    the fleet's gauge (`_accepts_gauge`)."""
    if node.attempts_per_s <= 0:
        return Level.OK
    level = level_at_least(
        node.rejects_per_s / node.attempts_per_s, t.rejects_warn_share, t.rejects_crit_share
    )
    return min(level, Level.WARNING) if shedding else level


def admission_sheds(frame: Frame) -> bool:
    """Admission in force limits something (a token bucket or a connection ceiling, the fleet's or a
    node's): the 503s are what it was set for. A frame that says nothing of admission sheds nothing known."""
    settings = [*([frame.admission] if frame.admission else []), *(frame.admission_overrides or ())]
    return any(_limits(s) for s in settings)


def _accepts_gauge(totals: Totals, t: GaugeThresholds, shedding: bool = False) -> Gauge:
    """Accepts and 503s, and the handshakes that timed out: wasted work, the mark of a meltdown (the
    regional-outage drill's 35k a second showed nowhere on the first screen). The worse of the 503 share and
    the timeouts is said first, and is what a narrow box keeps. `shedding`: admission is in force
    (`admission_sheds`)."""
    attempts = totals.attempts_per_s
    share = totals.rejects_per_s / attempts if attempts > 0 else 0.0
    level = level_at_least(share, t.rejects_warn_share, t.rejects_crit_share)
    # Turning a storm away cheaply is what admission is set for: a trainee's fix (400/s a node, 91 % of
    # the attempts refused) read ✖ critical, as if it had failed. It warns at most, saying whose 503s
    # they are; timeouts stay critical — no one chose those.
    by_admission = shedding and share >= t.rejects_warn_share
    refused = (
        min(level, Level.WARNING) if by_admission else level,
        f"503 share {100 * share:.1f} %" + (" by admission" if by_admission else ""),
        f"503s {100 * share:.1f} %",
    )
    said = [refused]
    if round(totals.timeouts_per_s) > 0:
        lost = totals.timeouts_per_s / attempts if attempts > 0 else 1.0
        timed_out = (
            level_at_least(lost, t.timeouts_warn_share, t.timeouts_crit_share),
            f"t/o {human_count(totals.timeouts_per_s)}/s ({100 * lost:.1f} %)",
            f"t/o {human_count(totals.timeouts_per_s)}/s",
        )
        said = [timed_out, refused] if timed_out[0] >= refused[0] else [refused, timed_out]
    (level, first, first_short), *rest = said
    # "t/o 35.3k/s (79.4 %) · 503s 0.0 %" is whole in a 200-column gauge (36 cells), the next in a 160's
    wide = [f"{first_short} · {rest[0][2]}", first] if rest else []
    return Gauge(
        "accepts",
        "accepts/s · 503/s",
        f"{human_count(totals.accepts_per_s)} · {human_count(totals.rejects_per_s)}",
        " · ".join([first, *(short for _, _, short in rest)]),
        level,  # the first said is the worse
        wide=tuple(wide),
        brief=first_short,
    )


def _headroom_gauge(frame: Frame, t: GaugeThresholds) -> Gauge:
    """Spare capacity of the nodes in rotation: the connection headroom the frame carries, or the room their
    CPU leaves when that is less — a node at 100 % CPU has no room for a client whatever its sockets (the
    regional-outage drill read "✓ 97 %" with every node at 100 %, handshaking and timing out). The mean CPU,
    as headroom is the fleet's; the node table and the cpu alarms say the hottest."""
    in_rotation = [node.cpu_pct for node in frame.nodes if node.state.in_rotation]
    room_pct = frame.totals.headroom_pct
    cpu_pct = sum(in_rotation) / len(in_rotation) if in_rotation else 0.0
    by_cpu = bool(in_rotation) and 100.0 - cpu_pct < room_pct
    if by_cpu:
        room_pct = 100.0 - cpu_pct
    level = level_at_most(room_pct, t.headroom_warn_pct, t.headroom_crit_pct)
    # Both lines said, as the drain gauge says its kill switch: yellow at 42 % beside "budget 35 %" alone
    # left the operator guessing why (trainee reviewer); where only one fits, the one that set the colour.
    warn, crit = f"{t.headroom_warn_pct:.0f}", f"{t.headroom_crit_pct:.0f}"
    lines, lines_wide = f"warn {warn} % · budget {crit} %", f"warn {warn}, budget {crit} %"  # (20: 120 cols)
    line = f"under {warn} %" if level is Level.WARNING else f"budget {crit} %"
    cpu = f"CPU {cpu_pct:.0f} %"
    if not in_rotation:
        # With nothing in rotation headroom is 0 (`figures.headroom_pct`): no room because there is nowhere
        # to send a client, not a full fleet — the gauge says which.
        detail, wide, brief = "no node in rotation", (), "none ready"
    elif by_cpu:
        detail, wide, brief = f"{cpu} · {lines}", (f"{cpu} · {lines_wide}", f"{cpu} · {line}"), cpu
    else:
        detail, wide, brief = lines, (lines_wide,), line
    return Gauge(
        "headroom",
        "headroom",
        f"{beside_limit(room_pct, t.headroom_crit_pct, also=[t.headroom_warn_pct])} %",
        detail,
        level,
        wide=wide,
        brief=brief,
    )


def node_cpu_level(node: NodeStatus, t: GaugeThresholds) -> Level:
    """Above the line, as the rules say it (the rollout pauses when a node *exceeds* its pause CPU, the
    abort criterion is CPU *over* 80 %): at ≥ a node at exactly 80.0 read critical with no alarm."""
    cpu = node.cpu_pct
    return Level.CRITICAL if cpu > t.cpu_crit_pct else Level.WARNING if cpu > t.cpu_warn_pct else Level.OK


def node_level(node: NodeStatus, t: GaugeThresholds, shedding: bool = False) -> Level:
    """The worst of a node's readings: what the table's state column and 'alarming only' go by.
    `shedding`: the node's admission limits something (`shedding_nodes`)."""
    levels = [
        node_cpu_level(node, t),
        level_at_least(node.handshake_p99_ms, t.handshake_warn_ms, t.handshake_crit_ms),
        rejects_level(node, t, shedding),
    ]
    if node.state is NodeState.DOWN:
        levels.append(Level.CRITICAL)
    elif node.state is NodeState.RESTARTING:
        levels.append(Level.WARNING)  # out of rotation, not by the operator's choice (draining is)
    if node.history_unreachable:
        levels.append(Level.WARNING)  # serving, but turning arriving clients away (1013) until Redis answers
    # A provisioning node is capacity on its way, asked for (or autoscaled): nothing to look at. As a
    # warning, 20 new nodes filled 'alarming only' and hid the ones that were (found in review).
    return max(levels)


#: A gauge's brief detail fits this many cells (a gauge at 80 columns).
BRIEF_CELLS = 12


def times_text(times: float) -> str:
    """A multiple short enough for a gauge's brief line: 7.3, 127, 1266, 13k, 3.2M ("1265.6× ste…" was cut)."""
    if times < 99.95:
        return f"{times:.1f}"
    if times < 9_999.5:
        return f"{times:.0f}"
    if times < 999_500:
        return f"{times / 1e3:.0f}k"
    return f"{times / 1e6:.1f}M"


def _sign(value: float) -> str:
    """The typographic minus, as in the count beside it ("−183.8k (−14.1 %)", not "(-14.1 %)")."""
    return "+" if value >= 0 else "−"
