"""Where the seeds say what should have been done: findings over a reviewed recording, each with its seed.

A finding fires only on evidence in the recording (an alarm the frames raised, a mass disconnect, 503s,
waves) and says what the seed prescribes, whether the recording shows it done, and when. Pure: a `Review`
in, findings out. The seeds are in ../shared/reference/seeds/ (outage seed 000, field guide 001,
interview seed 002, sync-engine essay 004).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from console.guards.capacity import NodeRoom
from console.model.units import counted
from console.record.clock import report_clock
from console.record.in_time import WhileItMattered, while_it_mattered, while_the_storm_lasted
from console.record.records import ActionRecord
from console.record.review import Review

OUTAGE_SEED = "outage seed (000, “Real Outage: A Thundering-Herd Reconnect”)"
INTERVIEW_SEED = "interview seed (002, draining a WebSocket gateway fleet)"
ESSAY_SEED = "sync-engine essay (004, “The reconnect storm problem”)"

#: lockstep_index at or above which attempts come in waves, not a smear (issue #2; docs/alarms.md).
LOCKSTEP_WAVES = 4.0


@dataclass(frozen=True)
class Finding:
    title: str
    evidence: str
    prescription: str
    seed: str
    done: bool | None  # None: the recording cannot tell (e.g. a client-side fix)
    what_was_done: str
    #: Done before the alarm fired, at this time (the report says "done before the alarm, at T"): a limit
    #: set pre-emptively, still in force when it fired, is the seed's move made early, not one missed.
    done_before_s: float | None = None
    #: Done only after it had stopped mattering, at this time (`done` False; the report says "not in time",
    #: and `what_was_done` how long after): its alarm had cleared, or the storm had recovered (`in_time`).
    #: It read "done — admission tightened at 1:15" for an alarm that had cleared at 0:25.
    done_late_s: float | None = None
    #: False where the recording's own numbers show the move unneeded (the report says "not needed", and
    #: `what_was_done` why): regional-outage was told to add capacity it never needed.
    needed: bool = True


class Timing(NamedTuple):
    """A finding's moves against when they mattered (`in_time.WhileItMattered`)."""

    #: The moves made while it mattered (or before: each finding says what a move before it is).
    timely: list[ActionRecord]
    #: The first move made after it stopped mattering, where none was made while it did.
    late: ActionRecord | None
    window: WhileItMattered

    @property
    def late_s(self) -> float | None:
        return self.late.time_s if self.late is not None else None

    def late_text(self, review: Review, what: str, then: str = "") -> str:
        """ "`what` at 1:15`then`, 50 s after the alarm had cleared" of the late move; "" where there was none."""
        if self.late is None:
            return ""
        return self.window.late_text(what, self.late.time_s, report_clock(review.header), then)


def timing(window: WhileItMattered, moves: list[ActionRecord]) -> Timing:
    timely = window.in_time(moves)
    return Timing(timely, None if timely or not moves else moves[0], window)


def abort_criterion(review: Review) -> Finding | None:
    fired_s = review.first_alarm_s("cpu_abort")
    if fired_s is None:
        return None
    times, running = review.series.times_s, review.series.rollout_running
    rollout_then = any(r for t, r in zip(times, running, strict=True) if t >= fired_s)
    halts = [a for a in review.actions_named("rollout_halt") if a.time_s >= fired_s - 30]
    if not rollout_then and not halts:
        return None  # hot nodes with no restart under way (a whole-fleet outage): nothing to halt
    evidence = f"cpu_abort fired at {_at(review, fired_s)}: a serving node above 80 % CPU for 30 s"
    if rollout_then:
        evidence += ", with a rollout still running"
    halted = timing(while_the_storm_lasted(review, ["cpu_abort"], "the criterion had cleared"), halts)
    halted_s = halted.timely[0].time_s if halted.timely else None
    if halted.late is not None:
        done_text = halted.late_text(review, "rollout halted")
    elif halted_s is None:
        done_text = "no rollout halt recorded"
    elif halted_s < fired_s:  # it read "-10 s after the criterion"
        done_text = f"rollout halted {fired_s - halted_s:.0f} s before the criterion fired"
    else:
        done_text = (
            f"rollout halted at {_at(review, halted_s)}, {halted_s - fired_s:+.0f} s after the criterion"
        )
    return Finding(
        title="Abort criterion: halt the restart",
        evidence=evidence,
        prescription="“If CPU on any surviving node exceeds 80 % for more than 30 seconds, halt the restart "
        "and reassess.” The runbook that said “continue the restart batch on schedule” made the storm worse.",
        seed=OUTAGE_SEED,
        done=halted_s is not None,
        what_was_done=done_text,
        done_before_s=halted_s if halted_s is not None and halted_s < fired_s else None,
        done_late_s=halted.late_s,
    )


def connections_alarm(review: Review) -> Finding | None:
    fired_s = review.first_alarm_s("connections_drop")
    if fired_s is None:
        return None
    after = [a for a in review.actions if a.time_s >= fired_s]
    early = admission_in_force(review, fired_s)
    acted = timing(while_it_mattered(review, ["connections_drop"]), after)
    first = acted.timely[0] if acted.timely else None
    acted_text = (
        f"first action {first.action} at {_at(review, first.time_s)}, "
        f"{first.time_s - fired_s:+.0f} s after the alarm ({len(after)} attempt(s) after it)"
        if first is not None
        else acted.late_text(review, f"first action {acted.late.action}" if acted.late else "")
    )
    return Finding(
        title="Total connections fell: treat it as an emergency",
        evidence=f"connections_drop (−5 % in 60 s) fired at {_at(review, fired_s)}{_since_disconnect(review, fired_s)}",
        prescription="Alarm on total active connections dropping more than 5 % in 60 s (a 90 s detection "
        "floor); any event that disconnects more than a few percent of clients is an emergency.",
        seed=OUTAGE_SEED,
        # treated as one: the operator acted after the alarm while it mattered, or had shed load before it
        done=first is not None or early is not None,
        what_was_done="; ".join(t for t in (_in_force_text(early), acted_text) if t)
        or "no action recorded after the alarm",
        done_before_s=early.time_s if early is not None else None,
        done_late_s=acted.late_s if early is None else None,
    )


def _since_disconnect(review: Review, fired_s: float) -> str:
    """When the alarm fired against the mass disconnects, in the order they came. A recording begun during
    the incident holds a first disconnect that is not the incident's, and an alarm raised on the fall it
    caught before that one read "-29 s after the first mass disconnect at 1:10"."""
    underway = review.underway
    first = review.disconnect_times_s[0] if review.disconnect_times_s else None
    if underway is not None and (first is None or fired_s < first):
        later = (
            f"; the first mass disconnect in the recording came after it, at {_at(review, first)}"
            if first
            else ""
        )
        return f", the recording starting during the incident ({underway.what}){later}"
    if first is None:
        return ""
    if fired_s < first:
        return (
            f", {first - fired_s:.0f} s before the first mass disconnect in the recording ({_at(review, first)}): "
            "connections were already falling"
        )
    in_it = " in the recording" if underway is not None else ""
    return f", {fired_s - first:.0f} s after the first mass disconnect{in_it} at {_at(review, first)}"


def admission_in_force(review: Review, fired_s: float) -> ActionRecord | None:
    """The admission change applied before `fired_s` whose limit the frames show in force when it fired:
    the seed's "shed load" done pre-emptively (regional-outage-admission.toml sets it before the power
    cut) read "not done — no admission change was applied after it fired". A limit since lifted, or one
    no applied action in the recording set, is not the operator's move at the alarm."""
    series = review.series
    i = series.frame_at(fired_s)
    if i is None or i >= len(series.admission_limited) or not series.admission_limited[i]:
        return None
    earlier = [a for a in review.actions_named("admission") if a.time_s < fired_s]
    return earlier[-1] if earlier else None


def _in_force_text(action: ActionRecord | None) -> str:
    # (the report leads with "done before the alarm, at T": the time is said once)
    return "the admission limit set then was still in force when it fired" if action else ""


def decorrelated_jitter(review: Review) -> Finding | None:
    figures = review.figures
    fired_s = review.first_alarm_s("lockstep_waves")
    index = figures.lockstep_index if figures is not None else None
    if figures is None or (fired_s is None and (index is None or index < LOCKSTEP_WAVES)):
        return None
    # Fired on the last 30 s though the storm window measured none (too short or quiet): the alarm says it.
    measured = (
        "lockstep index not measured" if index is None else f"lockstep index {index:.1f} over the storm"
    )
    return Finding(
        title="Reconnects came in lockstep waves: decorrelate the clients",
        evidence=measured
        + (f"; lockstep_waves fired at {_at(review, fired_s)}" if fired_s is not None else "")
        + f"; peak {figures.peak_attempts_per_100ms:,} attempts in one 100 ms bin",
        prescription="Client SDKs: decorrelated jitter, delay = random(base, min(max, last_delay × 3)) — "
        "or full jitter, random(0, min(cap, base × 2^n)) — instead of base × 2^n + 0–100 ms, whose waves "
        "grow more synchronised as the backoff grows.",
        seed=f"{OUTAGE_SEED}; full jitter: {INTERVIEW_SEED}",
        done=None,
        what_was_done="a client-side change: not visible from the fleet",
    )


def retry_after(review: Review) -> Finding | None:
    figures = review.figures
    storm = review.first_alarm_s("reconnect_rate_high")
    if figures is None or (storm is None and figures.rejects_total == 0):
        return None
    # (a limit set before the storm counts: it was in force through it)
    window = while_the_storm_lasted(review, ["reconnect_rate_high"])
    series = review.series
    limited = any(
        on and window.late_after(t) is None
        for t, on in zip(series.times_s, series.admission_limited, strict=False)
    )
    admissions = timing(window, review.actions_named("admission"))
    mark = "≈ " if figures.totals_estimated else ""
    shown = admissions.timely or ([admissions.late] if admissions.late else [])
    randomized = [
        a for a in shown if (hint := a.request.get("retry_after_s")) and len(hint) == 2 and hint[0] < hint[1]
    ]
    how = " with a randomized Retry-After window" if randomized else ""
    if admissions.timely:
        done_text = f"admission set at {_at(review, admissions.timely[0].time_s)}{how}"
    elif limited:
        done_text = "admission control was on"
    elif admissions.late is not None:
        done_text = admissions.late_text(review, "admission set", then=how)
    else:
        done_text = "no admission limit in force"

    return Finding(
        title="Turn the surge away cheaply: admission with a randomized Retry-After",
        evidence=f"{mark}{figures.rejects_total:,} upgrades answered 503, {mark}{figures.timeouts_total:,} "
        f"handshakes timed out{' (estimated from a sped-up recording: see Key figures)' if mark else ''}"
        + (f"; reconnect_rate_high fired at {_at(review, storm)}" if storm is not None else ""),
        prescription="A token bucket on new connections that rejects the excess with 503 and a randomized "
        "Retry-After, before any TLS or auth work; clients honour the hint, so the server controls the storm.",
        seed=f"{INTERVIEW_SEED}; server-driven backoff hint: {OUTAGE_SEED}",
        done=limited or bool(admissions.timely),
        what_was_done=done_text,
        done_late_s=None if limited else admissions.late_s,
    )


def drain_not_disconnect(review: Review) -> Finding | None:
    """On the mass disconnects the session's own operations made: those an instructor or the drill's
    timeline injected (a power failure, a kill), or the scenario's own script made (its timeline's
    restarts, its rollout, on a plain `sim serve`), are the incident, with nothing to drain — they are
    named as not counted, or the finding does not fire when they are all there is."""
    mass = [e for e in review.mass_disconnects if review.injection_of(e) is None]
    if not mass:
        return None
    dropped = sum(int(e.data.get("dropped", 0)) for e in mass)
    nodes = {node for e in mass for node in e.node_ids()}
    times = sorted({e.time_s for e in mass})
    drains = review.actions_named("drain")
    first_s, last_s = times[0], times[-1]
    return Finding(
        title="Drain, don't disconnect",
        evidence=f"{dropped:,} connections cut abruptly (not drained) on {len(nodes)} node(s), "
        + (
            f"at {_at(review, first_s)}"
            if first_s == last_s
            else f"in {len(times)} bursts from {_at(review, first_s)} to {_at(review, last_s)}"
        )
        + _injected_text(review),
        prescription="Take a node out of rotation, close its connections at a chosen rate with a randomized "
        "reconnect hint (500 k over 10 min ≈ 833/s), force-close at the deadline; drain-not-disconnect is "
        "the default for any operation that affects more than 5 % of the fleet at once.",
        seed=f"{INTERVIEW_SEED}; {OUTAGE_SEED}",
        done=bool(drains),
        what_was_done=f"{len(drains)} drain(s) applied" if drains else "no drain applied",
    )


def _injected_text(review: Review) -> str:
    if not review.injected:
        return ""
    cuts = [f"{_at(review, cut.time_s)} {injection.text}" for cut, injection in review.injected]
    counts = review.injected_counts()
    return f"; not counted: {counts} ({', '.join(cuts)}) — the incident, not an operator's choice"


def add_capacity(review: Review) -> Finding | None:
    """The seed's "add capacity" where the fleet could grow when headroom_low fired, or its frames do not
    say (`max_nodes` null: an older server or recording). Where they say it could not — `max_nodes` 0, or
    its nodes at `max_nodes` (`NodeRoom`, as the add guard refused the add) — the moves that fleet had."""
    fired_s = review.first_alarm_s("headroom_low")
    if fired_s is None:
        return None
    room = review.series.room_at(fired_s)
    if room is not None and not room.can_add:
        return _no_room(review, fired_s, room)
    # Added before the alarm counts (capacity takes minutes to come); after headroom came back, not in time.
    added = timing(
        while_the_storm_lasted(review, ["headroom_low"]), review.actions_named("add_capacity", "add_nodes")
    )
    first = added.timely[0] if added.timely else added.late
    unneeded = capacity_not_needed(review) if first is None else None
    return Finding(
        title="Headroom below 35 %: add capacity, do not restart",
        evidence=f"headroom_low fired at {_at(review, fired_s)}",
        prescription="Provision 35 % headroom; above 65 % utilisation there is no safe restart — add "
        "capacity instead. What fixed the outage: stopping the restart and adding 200 nodes.",
        seed=OUTAGE_SEED,
        done=None if unneeded else bool(added.timely),
        what_was_done=_capacity_added(review, first, added.window)
        if first
        else unneeded or "no capacity action recorded",
        done_late_s=added.late_s,
        needed=unneeded is None,
    )


def capacity_not_needed(review: Review) -> str | None:
    """Why the recording shows no capacity was needed, where it does: every client back for good, and from
    then on headroom_low never held — the fleet's own nodes kept the budget — so the alarm held only while
    nodes were out of rotation (regional-outage: 14 s, its gateways restarting, 0 in rotation; 37.5 % at
    the least with every client back). None where it cannot show it: headroom short with the clients
    back, clients that never came back (more nodes might have taken them), or no storm to come back from."""
    figures = review.figures
    if figures is None or figures.recovery_from_s is None or figures.recovery_s is None:
        return None
    back_s = figures.recovery_from_s + figures.recovery_s
    spans = [a for a in review.alarms if a.name == "headroom_low"]
    if any(a.cleared_s is None or a.cleared_s > back_s for a in spans):
        return None
    series = review.series
    after = [pct for t, pct in zip(series.times_s, series.headroom_pct, strict=False) if t >= back_s]
    if not spans or not after:
        return None
    held = ", ".join(f"{_at(review, a.since_s)}–{_at(review, a.cleared_s or a.since_s)}" for a in spans)
    return (
        f"headroom_low held only {held}; with every client back ({_at(review, back_s)}) headroom stayed at or "
        f"over the budget on the fleet's own nodes (lowest {min(after):.1f} %), no node added"
    )


#: The moves a fleet that cannot add nodes has when headroom is under the budget (the headroom_low alarm's
#: advice there), as the report names them done.
NO_ROOM_MOVES = {"rollout_halt": "rollout halted", "undrain": "undrain", "admission": "admission set"}


def _no_room(review: Review, fired_s: float, room: NodeRoom) -> Finding:
    """headroom_low on a fleet that could not add nodes then: "add capacity" was advice its `c` refused, and
    "no capacity action recorded" marked the operator down for not taking it. The seed's other moves
    instead, done when any was applied after the alarm, or an admission limit set before it was in force
    when it fired."""
    fleet = (
        "on a fleet that adds no nodes"
        if room.max_nodes <= 0
        else f"on a fleet at its most, {room.max_nodes} nodes"
    )
    after = [a for a in review.actions_named(*NO_ROOM_MOVES) if a.time_s >= fired_s]
    made = timing(while_the_storm_lasted(review, ["headroom_low"]), sorted(after, key=lambda a: a.time_s))
    # The first of each move made while it held, in time order.
    firsts: dict[str, float] = {}
    for action in made.timely:
        firsts.setdefault(_no_room_move(action), action.time_s)
    early = admission_in_force(review, fired_s)
    moves = [f"{NO_ROOM_MOVES[name]} at {_at(review, t)}" for name, t in firsts.items()]
    if made.late is not None:
        moves.append(made.late_text(review, NO_ROOM_MOVES[_no_room_move(made.late)]))
    done = "; ".join(t for t in (_in_force_text(early), *moves) if t)
    return Finding(
        title="Headroom below 35 %: do not restart",
        evidence=f"headroom_low fired at {_at(review, fired_s)}, {fleet}: it could add no capacity",
        prescription="Provision 35 % headroom; above 65 % utilisation there is no safe restart. What fixed the "
        f"outage was stopping the restart and adding 200 nodes; this fleet could add none, so: "
        f"{_moves_then(review, fired_s)}, and wait for headroom to come back.",
        seed=OUTAGE_SEED,
        done=bool(firsts) or early is not None,
        what_was_done=done or "no rollout halt, undrain or admission change recorded after it",
        done_before_s=early.time_s if early is not None else None,
        done_late_s=made.late_s if early is None else None,
    )


def _no_room_move(action: ActionRecord) -> str:
    return next(name for name in NO_ROOM_MOVES if action.action.startswith(name))


def _moves_then(review: Review, time_s: float) -> str:
    """The moves a fleet without room had at `time_s`, as headroom_low's advice named them then: halt the
    rollout under way, undrain the nodes out of rotation, shed load with admission. Every move whatever the
    fleet had ("halt the restart … give it more nodes before its next rollout") was read on a controller
    over a nodes file, which runs no rollout and adds no node, while its alarm said only to shed load."""
    series = review.series
    i = series.frame_at(time_s)
    halt = i is not None and series.rollout_haltable[i]
    out = series.out_of_rotation[i] if i is not None else 0
    moves = [
        "halt the rollout" if halt else "",
        f"undrain the {counted(out, 'node')} out of rotation" if out else "",
        "shed load with admission",
    ]
    return ", ".join(move for move in moves if move)


def _capacity_added(review: Review, action: ActionRecord, window: WhileItMattered) -> str:
    """`20 nodes added at 3:30, ready at 7:30`: the count from the request, the ready time from the
    verdict's projection when the backend knew its provisioning time; added after `window`, how long after
    ("…, 20 s after the alarm had cleared")."""
    count = action.request.get("count")
    what = f"{count} nodes added" if isinstance(count, int) else "capacity added"
    ready_at_s = action.verdict.projections.get("ready_at_s") if action.verdict is not None else None
    ready = f", ready at {_at(review, ready_at_s)}" if isinstance(ready_at_s, int | float) else ""
    return window.late_text(what, action.time_s, report_clock(review.header)) + ready


def losing_ground(review: Review) -> Finding | None:
    fired = [review.first_alarm_s(name) for name in ("drain_inflow_losing", "drain_inflow_kill_switch")]
    fired_s = min((t for t in fired if t is not None), default=None)
    if fired_s is None:
        return None
    after = [a for a in review.actions_named("admission") if a.time_s >= fired_s]
    shed = timing(while_the_storm_lasted(review, ["drain_inflow_losing", "drain_inflow_kill_switch"]), after)
    early = admission_in_force(review, fired_s)
    tightened = (
        f"admission tightened at {_at(review, shed.timely[0].time_s)}"
        if shed.timely
        else shed.late_text(review, "admission tightened")
    )
    return Finding(
        title="Drain ÷ inflow below 1: the storm is winning",
        evidence=f"drain÷inflow alarm fired at {_at(review, fired_s)}",
        prescription="Below 1 you are losing ground; below 1 for more than a minute or two the storm is "
        "winning; trip the kill switch around 0.6 — shed load (a breaker answering Retry-After 30 s) rather "
        "than let retries feed the queue.",
        seed=ESSAY_SEED,
        done=bool(shed.timely) or early is not None,
        what_was_done="; ".join(t for t in (_in_force_text(early), tightened) if t)
        or "no load was shed: no admission change was applied after it fired",
        done_before_s=early.time_s if early is not None else None,
        done_late_s=shed.late_s if early is None else None,
    )


RULES: tuple[Callable[[Review], Finding | None], ...] = (
    abort_criterion,
    connections_alarm,
    decorrelated_jitter,
    retry_after,
    drain_not_disconnect,
    add_capacity,
    losing_ground,
)


def _at(review: Review, time_s: float) -> str:
    """A finding's time as the rest of the report reads it: a drill's on its clock, else fleet time."""
    return report_clock(review.header)(time_s)


def findings(review: Review) -> list[Finding]:
    return [finding for rule in RULES if (finding := rule(review)) is not None]
