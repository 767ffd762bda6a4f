"""The console's check before a change leaves it: big changes, and what the fleet changed under a form."""

from __future__ import annotations

from console.model.actions.form import Prefill, parse_form
from console.model.big_changes import big_changes, changed_since_filled, refilled
from console.protocol import ActionKind, AdmissionSettings


def test_big_changes_are_cuts_below_half_raises_above_double_and_limits_set_or_lifted():
    now = AdmissionSettings(rate_per_s=500.0, burst=1000, max_connections=None, retry_after_s=(1.0, 30.0))
    none = Prefill({}, "")

    def changed(**typed):
        body = {"rate_per_s": 500.0, "burst": 1000, "max_connections": None, **typed}
        call = parse_form(ActionKind.ADMISSION, None, {"retry_after_min_s": "1", "retry_after_max_s": "30"})
        call = type(call)(call.kind, None, {**call.body, **body})
        return [(c.label.split(" ")[0], c.before, c.after) for c in big_changes(call, now, none)]

    assert changed() == [] and changed(rate_per_s=250.0, burst=2000) == []  # half, double: no check
    assert changed(rate_per_s=2.0) == [("rate", "500", "2")]
    assert changed(burst=5000) == [("burst", "1,000", "5,000")]
    assert changed(rate_per_s=None, max_connections=40_000) == [
        ("rate", "500", "unlimited"),
        ("ceiling", "unlimited", "40,000"),
    ]
    capacity = parse_form(ActionKind.ADD_CAPACITY, None, {"count": "12"})
    assert big_changes(capacity, None, Prefill({"count": "12"}, "")) == []
    assert len(big_changes(capacity, None, Prefill({"count": "3"}, ""))) == 1


def test_a_change_is_checked_against_what_each_node_it_covers_runs():
    """Found in review: with 2/s set on three nodes, a fleet-wide 500/s read as no change against the
    fleet's 500/s — and lifted those three 250-fold, at one key. Each value the covered nodes run is checked,
    said where it runs when they differ."""
    from console.protocol import AdmissionInForce

    fleet = AdmissionSettings(rate_per_s=500.0, burst=None, max_connections=None, retry_after_s=(1.0, 30.0))
    slow = fleet.model_copy(update={"rate_per_s": 2.0, "nodes": ["gw-001", "gw-002", "gw-003"]})
    in_force = AdmissionInForce(fleet, (slow,), tuple(f"gw-{i:03d}" for i in range(10)))
    window = {"retry_after_min_s": "1", "retry_after_max_s": "30"}

    def changed(nodes: list[str] | None = None, **typed):
        call = parse_form(ActionKind.ADMISSION, None, {**window, "rate_per_s": "500"})
        body = {**call.body, **typed} | ({"nodes": nodes} if nodes else {})
        call = type(call)(call.kind, None, body)
        return [
            (c.label.split(" ")[0], c.before, c.after) for c in big_changes(call, in_force, Prefill({}, ""))
        ]

    assert changed() == [("rate", "2 on 3 nodes", "500")]
    assert changed(nodes=["gw-001"]) == [("rate", "2", "500")]  # the one node's own: said plainly
    assert changed(nodes=["gw-005"]) == []  # it runs the fleet's 500/s already
    assert changed(rate_per_s=3.0) == [("rate", "500 elsewhere", "3")]


def test_a_colleagues_change_under_an_open_form_is_shown_and_kept_on_the_way_back():
    # Filled at rate 1000, burst 500; a colleague cut the rate to 700; this operator typed burst 10 only.
    window = {"retry_after_min_s": "1", "retry_after_max_s": "30"}
    filled = Prefill({"rate_per_s": "1000", "burst": "500", **window}, "the fleet")
    now = Prefill({"rate_per_s": "700", "burst": "500", **window}, "the fleet")
    typed = {"rate_per_s": "1000", "burst": "10", **window}
    changes = changed_since_filled(ActionKind.ADMISSION, typed, filled, now)
    assert [(c.before, c.after) for c in changes] == [("700", "1000")]
    assert (
        changes[0].why
        == "changed in the fleet since this form was filled (it read 1000): sending puts that back"
    )
    assert changed_since_filled(ActionKind.ADMISSION, {**typed, "rate_per_s": "700"}, filled, now) == []
    assert changed_since_filled(ActionKind.ADMISSION, typed, filled, filled) == []  # nothing moved
    assert refilled(typed, filled, now).values == {"rate_per_s": "700", "burst": "10", **window}


def test_an_empty_prefill_is_no_value_before_not_an_error():
    """The drain planner with no safe rate pre-fills the rate empty (a rate it refuses to parse): the
    check compares it as no value instead of raising — that raise once closed the form, nothing sent."""
    filled = Prefill(
        {"rate_per_s": "", "deadline_s": "600", "hint_min_ms": "1000", "hint_max_ms": "2000"}, ""
    )
    sent = {**filled.values, "rate_per_s": "833"}
    assert changed_since_filled(ActionKind.DRAIN, sent, filled, filled) == []
    moved = Prefill({**filled.values, "rate_per_s": "50"}, "")  # the fleet offers a rate now
    [change] = changed_since_filled(ActionKind.DRAIN, sent, filled, moved)
    assert (change.before, change.after) == ("50", "833") and "(it read none)" in change.why
