"""An applied resume says when the next batch starts: its verdict is ok, so no dialog shows the verdict's
`next_batch` note, and the toast said a plain "applied" (reviewer, real fleet: batch 2 then began 47 s
early — docs/guards.md, "halt and resume")."""

from __future__ import annotations

from console.model.actions.answer import said_when_applied
from console.protocol import Check, Verdict, VerdictLevel

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE, fleet_ready
from .fake_actions import FakeFleetApi
from .test_actions import acting_app, open_form, with_rollout


def test_the_notes_said_when_applied_are_the_next_batch_only() -> None:
    said = "batch 2 starts in 47 s (the 90 s interval runs from batch 1's start to batch 2's): …"
    verdict = Verdict(
        level=VerdictLevel.OK,
        action="rollout_resume",
        checks=[
            Check(name="cpu_now_pct", value=20.0, limit=75.0, ok=True, why="busiest serving node"),
            Check(name="next_batch", value="in 47 s", limit=None, ok=True, why=said, level=VerdictLevel.OK),
        ],
        projections={},
    )
    assert said_when_applied(verdict) == said
    assert (
        said_when_applied(None) == "" and said_when_applied(verdict.model_copy(update={"checks": []})) == ""
    )


async def test_an_applied_resume_says_when_its_next_batch_starts() -> None:
    api = FakeFleetApi()  # judges the resume of a rollout paused before its first batch (the real guard)
    app = acting_app(api)
    async with app.run_test(size=SIZE) as pilot:
        await fleet_ready(app)
        with_rollout(app, "paused", batch=0, batches=3, batch_size=1)
        await open_form(app, pilot, "r", "the resume form")
        await pilot.press("enter")
        await wait_for(lambda: api.applied, what="the resume")
        await wait_for(
            lambda: any("applied" in n.message for n in app._notifications), what="the applied toast"
        )
        toast = next(n.message for n in app._notifications if "applied" in n.message)
        assert toast.startswith("applied — batch 1 starts at once — under way"), toast
