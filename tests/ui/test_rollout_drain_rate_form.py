"""The rollout form's drain rate (`drain_rate_per_s`): pre-filled with the rate the backend drains each batch
node at (its capacity record's `batch_drain_rate_per_s`), blank where it does not say — blank meaning the
backend's rate, said in the field's hint — and sent only when typed: an older server refuses a field it
does not know, a null one too."""

from __future__ import annotations

import dataclasses

from textual.widgets import Input, Label

from .conftest import SIZE, fleet_ready
from .fake_actions import GROWABLE, FakeFleetApi
from .test_actions import acting_app, open_form, shown


async def _rollout_form(api: FakeFleetApi, pilot, app):
    await fleet_ready(app)
    return await open_form(app, pilot, "R", "the rollout form")


async def test_the_drain_rate_is_prefilled_with_the_backends_and_sent_as_typed():
    api = FakeFleetApi()
    api.capacity = dataclasses.replace(GROWABLE, batch_drain_rate_per_s=833.0, batch_drain_deadline_s=600.0)
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        form = await _rollout_form(api, pilot, app)
        field = form.query_one("#field-drain_rate_per_s", Input)
        assert field.value == "833"
        labels = [shown(label).strip() for label in form.query(Label)]
        assert "drain rate (closes/s/node)" in labels, labels
        assert field.placeholder.startswith("blank: backend's rate, or a number > 0"), field.placeholder
        field.value = "20"
        await pilot.press("ctrl+d")
        await pilot.pause()
        method, path, body = api.sent[-1]
        assert (method, path, body["drain_rate_per_s"], body["dry_run"]) == ("POST", "/v1/rollout", 20, True)


async def test_blank_is_the_backends_rate_and_is_not_sent():
    api = FakeFleetApi()  # its capacity record says no batch drain rate (0: unknown)
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        form = await _rollout_form(api, pilot, app)
        assert form.query_one("#field-drain_rate_per_s", Input).value == ""
        await pilot.press("ctrl+d")
        await pilot.pause()
        _, path, body = api.sent[-1]
        assert path == "/v1/rollout" and "drain_rate_per_s" not in body, body


async def test_a_drain_rate_out_of_range_is_named_with_its_range_and_nothing_is_sent():
    api = FakeFleetApi()
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        form = await _rollout_form(api, pilot, app)
        form.query_one("#field-drain_rate_per_s", Input).value = "0"
        await pilot.pause()
        error = shown(form.query_one("#form-error")).strip()
        assert error.startswith("✖ drain rate (closes/s/node): '0'"), error
        assert "> 0 and ≤ 1,000,000,000 (blank: backend's rate)" in error, error
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is form and api.sent == []
