"""A setting the operator did not give keeps what the nodes a change covers run — the console's admission
form and `act … admission` by one rule (`kept_setting`) — and where those nodes run different values of it,
no one call keeps them all: it must be given (found on a real fleet: with n1, n2 at burst 20 of their own,
typing only a rate in the form sent the fleet's unlimited burst, "burst 20 on 2 nodes → unlimited", and
`act … --rate 30` said "kept as the fleet has them: burst unlimited" while lifting theirs)."""

from __future__ import annotations

import pytest

from console.errors import MissingInput
from console.model.actions.admission import MixedSetting, admission_prefill, kept_setting
from console.model.actions.form import parse_form
from console.protocol import ActionKind, AdmissionInForce, AdmissionSettings

FLEET = AdmissionSettings(rate_per_s=None, max_connections=None, retry_after_s=(1.0, 30.0))
OWN = FLEET.model_copy(update={"rate_per_s": 40.0, "burst": 20, "nodes": ["n1", "n2"]})
IN_FORCE = AdmissionInForce(FLEET, (OWN,), ("n1", "n2", "n3"))


def test_a_setting_every_covered_node_runs_is_kept() -> None:
    assert kept_setting(IN_FORCE, ["n1", "n2"], "burst") == 20
    assert kept_setting(IN_FORCE, ["n3"], "burst") is None
    assert kept_setting(IN_FORCE, None, "retry_after_s") == [1.0, 30.0]  # (as a body carries it)


def test_a_setting_the_covered_nodes_run_differently_must_be_given() -> None:
    with pytest.raises(MixedSetting) as mixed:
        kept_setting(IN_FORCE, None, "burst")
    assert mixed.value.field == "burst"
    assert str(mixed.value) == (
        "burst is required: the fleet's nodes run different values of it (20 on n1, n2, unlimited on n3): "
        "give one for them all"
    )
    with pytest.raises(MixedSetting, match=r"the nodes named run different values of it \(40 on n1, unl"):
        kept_setting(IN_FORCE, ["n1", "n3"], "rate_per_s")


def test_the_form_is_filled_with_what_every_node_runs_and_asks_for_what_differs() -> None:
    prefill = admission_prefill(IN_FORCE)
    assert prefill.values == {
        "rate_per_s": "",
        "burst": "",
        "max_connections": "",
        "retry_after_min_s": "1",
        "retry_after_max_s": "30",
    }
    assert set(prefill.required) == {"rate_per_s", "burst"}
    assert "burst: 20 on n1, n2, unlimited on n3" in prefill.source
    typed = {**prefill.values, "rate_per_s": "30"}
    with pytest.raises(MissingInput) as missing:  # burst left as filled: not kept on n1, n2 — asked for
        parse_form(ActionKind.ADMISSION, None, typed, required=prefill.required)
    assert missing.value.field == "burst" and "20 on n1, n2, unlimited on n3" in str(missing.value)
    call = parse_form(ActionKind.ADMISSION, None, {**typed, "burst": "unlimited"}, required=prefill.required)
    assert call.body["burst"] is None and call.body["rate_per_s"] == 30.0  # the word: no limit, as given
    # Every node running the fleet's settings: filled with them, nothing asked for.
    uniform = admission_prefill(AdmissionInForce(OWN.model_copy(update={"nodes": None})))
    assert uniform.values["burst"] == "20" and uniform.required == {}


def test_a_field_asked_for_does_not_offer_blank_in_its_hint() -> None:
    """Its hint read "blank: unlimited, or a number > 0" — blank being the one thing refused there."""
    from console.model.actions.form import FORMS

    burst = next(spec for spec in FORMS[ActionKind.ADMISSION] if spec.name == "burst")
    assert burst.placeholder() == "blank: unlimited, or an integer ≥ 1"
    assert burst.placeholder(required=True) == "the nodes differ (below): an integer ≥ 1, or unlimited"
