"""The instructor's palette on a real server on loopback: inject from the console, refusals shown."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.command import CommandList
from textual.widgets import Input, Label, Static

from console.client.actions import ActionClient
from console.model.link import Received
from console.protocol import Event
from console.ui.app import ConsoleApp
from console.ui.commands import console_commands
from console.ui.inject import InjectForm
from console.ui.widgets.hint_line import HintLine
from tests.actions.conftest import TOKENS, Acting, calm_simulation, start_acting

from ..client.fake_fleet_server import wait_for
from .conftest import SIZE, fleet_ready
from .test_drill import _EPOCH_WALL_S, TinyFeed, reads_the_drill_clock_at_02_00_45
from .test_oncall import visible_lines


def _hits(app: ConsoleApp) -> int:
    lists = app.screen.query(CommandList)
    return lists.first().option_count if lists else 0


@pytest.fixture(scope="module", autouse=True)
def compiled_kernels() -> None:
    calm_simulation().step()


@pytest.fixture
def acting(tmp_path: Path) -> Iterator[Acting]:
    running = start_acting(tmp_path)
    yield running
    running.server.stop()
    running.audit.close()


def test_only_an_instructors_palette_offers_injections() -> None:
    assert not [c for c in console_commands(["dark"]) if c[0].startswith("Inject")]
    titles = [c[0] for c in console_commands(["dark"], instructor=True)]
    assert "Inject: kill_nodes" in titles and "Inject: disconnect_fraction" in titles


async def test_palette_injects_and_the_server_refusal_is_shown(acting: Acting) -> None:
    app = ConsoleApp(admin=ActionClient(acting.url, TOKENS["admin"]), instructor=True, remember_theme=False)
    victim = acting.simulation.node_ids[0]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Inject: kill_nodes")
        await wait_for(lambda: _hits(app) == 1, what="the palette's one hit")
        await pilot.press("down", "enter")
        await wait_for(
            lambda: isinstance(app.screen, InjectForm) and bool(app.screen.query(Input)), what="the form"
        )
        field = app.screen.query_one(Input)
        field.value = "oops"  # not KEY=VALUE: refused in the form, nothing sent
        await pilot.press("enter")
        await pilot.pause()
        assert "KEY=VALUE" in str(app.screen.query_one("#inject-error", Label).render())
        field.value = f"nodes={victim}"
        await pilot.press("enter")
        await wait_for(lambda: any("applied" in (n.title or "") for n in app._notifications), what="applied")
        await wait_for(
            lambda: acting.simulation.state_of(0).value == "down", what=f"{victim} down after the injection"
        )
        app.action_inject("disconnect_fraction")
        await wait_for(
            lambda: isinstance(app.screen, InjectForm) and bool(app.screen.query(Input)),
            what="the second form",
        )
        first = app.screen
        first.query_one(Input).value = "fraction=7"
        await pilot.press("enter")
        # As the action forms do: back to the form, what was typed kept, the server's words in it — it
        # closed on the 422 and said it only in a notification, the words to fix gone with the form.
        await wait_for(
            lambda: isinstance(app.screen, InjectForm) and app.screen is not first, what="the form again"
        )
        again = app.screen
        await pilot.pause()
        said = str(again.query_one("#inject-error", Label).render())
        assert said.startswith("✖ the server refused: fraction") and "nothing applied" in said
        assert again.query_one(Input).value == "fraction=7" and again.focused is again.query_one(Input)
        assert not any(n.severity == "error" for n in app._notifications)
        again.query_one(Input).value = "fraction=0.1"
        await pilot.press("enter")
        await wait_for(
            lambda: sum("applied" in (n.title or "") for n in app._notifications) == 2, what="applied, fixed"
        )
        assert not isinstance(app.screen, InjectForm)
        app.action_inject("set_policy")  # the user pass's case: an unknown policy
        await wait_for(lambda: isinstance(app.screen, InjectForm), what="the policy form")
        first = app.screen
        first.query_one(Input).value = "policy=zzz"
        await pilot.press("enter")
        await wait_for(
            lambda: isinstance(app.screen, InjectForm) and app.screen is not first,
            what="the policy form again",
        )
        await pilot.pause()
        assert "✖ the server refused: policy" in str(app.screen.query_one("#inject-error", Label).render())
        await pilot.press("escape")
        await wait_for(lambda: not isinstance(app.screen, InjectForm), what="the form cancelled")
        assert not any(n.severity == "error" for n in app._notifications)


async def test_palette_pauses_and_starts_the_served_fleets_clock(acting: Acting) -> None:
    import httpx

    titles = [c[0] for c in console_commands(["dark"], instructor=True)]
    assert "Fleet clock: pause" in titles and "Fleet clock: start / resume" in titles
    headers = {"Authorization": f"Bearer {TOKENS['admin']}"}

    def paused() -> bool:
        return httpx.get(f"{acting.url}/v1/sim/clock", headers=headers).json()["paused"]

    app = ConsoleApp(admin=ActionClient(acting.url, TOKENS["admin"]), instructor=True, remember_theme=False)
    async with app.run_test(size=SIZE):
        assert not paused()
        app.action_fleet_clock(True)
        await wait_for(paused, what="the fleet clock paused")
        await wait_for(lambda: any(n.message == "paused" for n in app._notifications), what="told so")
        app.action_fleet_clock(False)
        await wait_for(lambda: not paused(), what="the fleet clock running again")
    plain = ConsoleApp(admin=ActionClient(acting.url, TOKENS["admin"]), remember_theme=False)
    async with plain.run_test(size=SIZE):
        plain.action_fleet_clock(True)  # not an instructor's console: refused here, nothing sent
        await wait_for(lambda: any("instructor" in n.message for n in plain._notifications), what="refused")
    assert not paused()


async def test_each_injections_description_shows_whole_in_its_form() -> None:
    """ "disconnect_fraction … at once: frac" — the description was cut at the box's edge."""
    from console.protocol import INJECTIONS

    app = ConsoleApp(remember_theme=False)
    async with app.run_test(size=SIZE) as pilot:
        for event, description in INJECTIONS.items():
            app.push_screen(InjectForm(event))
            await pilot.pause()
            label = app.screen.query(Label).first()
            box = app.screen.query_one("#inject-box")
            assert label.size.width <= box.content_size.width
            assert label.size.width * label.size.height >= len(f"inject {event} — {description}"), event
            app.pop_screen()


async def test_a_served_drills_story_hints_and_end_are_told_on_an_attached_console(storm_app) -> None:
    """Found running instructor mode as a trainee would: on `stormdeck attach` the drill's story
    ("02:00:30 the region comes back"), its hints and "the drill's time is up" reached the model and were
    shown nowhere — they name no node, and only the node screen lists events. The instructor's console
    (`attach --instructor`) is the same console. The hints have the fleet screen's hint line, as in the
    drill console (tests/ui/test_attached_hints.py), not a toast."""
    told = [
        Event(time_s=30, kind="drill", message="02:00:30 the region comes back", data={"drill": "d"}),
        Event(time_s=40, kind="hint", message="Ration the return with admission.", data={"drill": "d"}),
        Event(time_s=41, kind="node_state", message="gw-001 draining", node="gw-001"),  # the fleet's own
        Event(time_s=420, kind="drill", message="02:07:00 the drill's time is up (D)", data={"ended": True}),
    ]
    async with storm_app.run_test(size=SIZE) as pilot:
        for event in told:
            storm_app.feed(Received(event, 1_800_000_000.0))
        await pilot.pause()
        shown = [(n.title, n.message) for n in storm_app._notifications]
        assert shown == [
            ("drill", "02:00:30 the region comes back"),
            ("drill", "02:07:00 the drill's time is up (D)"),
        ]
        line = storm_app.screen.query_one(HintLine)
        assert str(line.query_one(".newest-hint", Static).render()) == (
            "hint 0:00:40 · Ration the return with admission."
        )
        assert all(n.timeout >= 20 for n in storm_app._notifications)  # long enough to read mid-form


#: The hello's `drill` of a served drill whose clock starts at 02:00 (as the tiny drill's does).
SERVED = {
    "name": "tiny",
    "title": "A tiny storm",
    "clock_start_s": 2 * 3600,
    "duration_s": 60,
    "seed_source": "outage seed (000): the whole region restarts at once",
    "teaches": "Hold the floor; ration the return with admission.",
    "briefing": "02:00, a tiny fleet of 12 gateways.\nA storm is coming at 02:00:40. Keep the fleet up.",
    "objectives": [
        {"name": "connections never below 99 %", "points": 60},
        {"name": "admission set", "points": 40},
    ],
}


def attached_app(instructor: bool = False, clock: Callable[[], float] | None = None) -> ConsoleApp:
    """`stormdeck attach URL [--instructor]`'s console, fed in-process (`TinyFeed`)."""
    return ConsoleApp(
        clock=clock or (lambda: _EPOCH_WALL_S + 30.4),
        remember_theme=False,
        theme_name="dark",
        instructor=instructor,
    )


async def past_the_briefing(app: ConsoleApp, pilot) -> None:  # type: ignore[no-untyped-def]
    """A trainee's console opens on the served drill's briefing: Enter goes to the fleet."""
    from console.ui.screens.briefing import BriefingScreen

    if not app.instructor:
        # Mounted, not just pushed: an Enter pressed before the screen's bindings were live went nowhere on a
        # loaded machine (the full suite, 2 workers), and the fleet screen never came.
        await wait_for(
            lambda: isinstance(app.screen, BriefingScreen) and app.screen.is_mounted, what="the briefing"
        )
        await pilot.press("enter")
    await fleet_ready(app)


@pytest.mark.parametrize("instructor", [False, True], ids=["trainee", "instructor"])
async def test_attached_to_a_served_drill_the_screen_reads_the_drill_clock(instructor: bool) -> None:
    """Found attached to a served drill: the header said `fleet clock 0:00:45` while the drill's lines and
    hints said "02:00:45" — two clocks to translate between. As in the single-player drill console, the
    header, the alarms' raised times, the node screen and a hint's title read the drill's clock."""

    app = attached_app(instructor)
    async with app.run_test(size=SIZE) as pilot:
        feed = TinyFeed(app, served=SERVED)
        await past_the_briefing(app, pilot)
        feed.run(45)  # past the storm at 40 s: alarms raised, nodes restarted
        feed.event(Event(time_s=45, kind="hint", message="Ration the return.", data={"drill": "tiny"}))
        await pilot.pause()  # (a notification is a message to the app)
        await fleet_ready(app)
        await reads_the_drill_clock_at_02_00_45(app, hint_said="hint 02:00:45 · Ration the return.")


def clock_frames(feed: TinyFeed, paused: bool, count: int = 2) -> None:
    """What a served fleet sends while its clock stands (`paused`) or runs: its frames say which."""
    app = feed.app
    for _ in range(count):
        frame = app.model.frame
        assert frame is not None
        feed.second += 1
        still = frame.model_copy(update={"seq": frame.seq + 1, "span_s": 0.0, "clock_paused": paused})
        app.feed(Received(still, _EPOCH_WALL_S + feed.second))


@pytest.mark.parametrize("size", [(80, 24), SIZE], ids=["80x24", "160x48"])
@pytest.mark.parametrize("instructor", [False, True], ids=["trainee", "instructor"])
async def test_the_header_says_while_the_drill_clock_is_paused(
    instructor: bool, size: tuple[int, int]
) -> None:
    """Found on the instructor's console: nothing showed that the drill's clock was paused — the trainees'
    figures froze with the header saying `link ✓ live`, and the instructor could not tell a paused drill
    from a running one without the palette's notice."""
    from console.ui.widgets.header import FleetHeader

    feeds: list[TinyFeed] = []
    app = attached_app(instructor, clock=lambda: _EPOCH_WALL_S + (feeds[0].second if feeds else 0) + 0.4)
    async with app.run_test(size=size) as pilot:
        feed = TinyFeed(app, served=SERVED)
        feeds.append(feed)
        await past_the_briefing(app, pilot)
        feed.run(5)
        await fleet_ready(app)
        header = app.screen.query_one(FleetHeader)
        assert "paused" not in str(header.render())
        clock_frames(feed, paused=True)
        await fleet_ready(app)
        shown = str(header.render())
        assert "02:00:05 ⏸ paused" in shown and "link ✓ live" in shown, shown
        clock_frames(feed, paused=False)
        await fleet_ready(app)
        assert "paused" not in str(header.render())


@pytest.mark.parametrize("size", [(80, 24), SIZE], ids=["80x24", "160x48"])
@pytest.mark.parametrize("instructor", [False, True], ids=["trainee", "instructor"])
@pytest.mark.parametrize("when", ["while attached", "attached after"])
async def test_the_header_says_the_drill_ended_for_as_long_as_it_is_on_screen(
    instructor: bool, size: tuple[int, int], when: str
) -> None:
    """Found as a trainee who looked away: the drill's end was a notification, gone after 30 s, and the
    fleet ran on as before — nothing on screen said the drill was over. The header says it beside the
    drill's clock (where "⏸ paused" shows), from the end event or from a hello after the end, and keeps
    saying it, through the clock's pause too, after the notification has gone."""
    from console.ui.widgets.header import FleetHeader

    feeds: list[TinyFeed] = []
    app = attached_app(instructor, clock=lambda: _EPOCH_WALL_S + (feeds[0].second if feeds else 0) + 0.4)
    async with app.run_test(size=size) as pilot:
        ended = when == "attached after"
        feed = TinyFeed(app, served={**SERVED, "ended": ENDED} if ended else SERVED)
        feeds.append(feed)
        if not ended:
            await past_the_briefing(app, pilot)
        feed.run(5)
        await fleet_ready(app)
        header = app.screen.query_one(FleetHeader)

        def line() -> str:
            (shown,) = visible_lines(header)
            return shown

        if not ended:
            assert "ended" not in line(), line()
            feed.event(Event.model_validate(ENDED))
            feed.run(1)
            await fleet_ready(app)
        await pilot.pause()  # (a notification is a message to the app)
        told = [n.message for n in app._notifications]
        assert told == ["02:01:00 the drill's time is up (A tiny storm)"]  # told, as before
        app.clear_notifications()  # 30 s later: the notification is gone; the header still says it
        feed.run(1)
        await fleet_ready(app)
        assert re.search(r"02:00:0\d ⏹ ended", line()) and "link ✓ live" in line(), line()
        clock_frames(feed, paused=True)  # paused after the end: both said
        await fleet_ready(app)
        assert re.search(r"02:00:0\d ⏹ ended ⏸ paused", line()) and "link ✓ live" in line(), line()


def _hit_titles(app: ConsoleApp) -> list[str]:
    [command_list] = app.screen.query(CommandList)
    prompts = (str(command_list.get_option_at_index(i).prompt) for i in range(command_list.option_count))
    return [prompt.splitlines()[0] for prompt in prompts]  # the title, without its help line


@pytest.mark.parametrize("query", ["start", "resume"])
async def test_an_instructor_looking_for_the_clock_in_the_palette_finds_it_first(query: str) -> None:
    """Found by an instructor starting a paused drill: "start" listed "Action: start rollout" (Enter opened
    the rollout form) above "Fleet clock: start / resume". The clock comes first on an instructor's console;
    the trainee's palette, which has no clock, is as it was, and Enter on an empty query changes nothing."""
    app = ConsoleApp(instructor=True, remember_theme=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await wait_for(lambda: _hits(app) > 5, what="the palette's commands")
        assert not _hit_titles(app)[0].startswith(("Fleet clock", "Action", "Inject"))
        await pilot.press(*query)
        await wait_for(lambda: 2 <= _hits(app) <= 5, what=f"the palette's hits for {query!r}")
        titles = _hit_titles(app)
        assert titles[0] == "Fleet clock: start / resume", titles
        assert f"Action: {query} rollout" in titles  # still there, below
    trainee = ConsoleApp(remember_theme=False)
    async with trainee.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*query)
        await wait_for(lambda: _hits(trainee) >= 1, what="the trainee's hits")
        assert _hit_titles(trainee)[0] == f"Action: {query} rollout"


@pytest.mark.parametrize("size", [(80, 24), SIZE], ids=["80x24", "160x48"])
async def test_a_trainee_attached_to_a_served_drill_reads_its_briefing_once(size: tuple[int, int]) -> None:
    """Found as a trainee on `stormdeck attach`: the drill's briefing and objectives were shown nowhere —
    the single-player drill opens on them, a served drill's trainees never saw them. Shown once, on the
    first hello naming the drill; Enter (or Esc) goes to the fleet, and a reconnect's hello does not
    bring it back."""
    from console.ui.screens.briefing import BriefingScreen
    from console.ui.screens.main import MainScreen

    app = attached_app()
    async with app.run_test(size=size) as pilot:
        feed = TinyFeed(app, served=SERVED)
        feed.run(3)
        await wait_for(lambda: isinstance(app.screen, BriefingScreen), what="the briefing")
        await pilot.pause()
        box = app.screen.query_one("#briefing")
        assert box.region.right <= size[0] and box.region.x >= 0
        text = str(app.screen.query_one("#briefing-text").render())
        for said in (
            "A tiny storm",
            "rehearses: outage seed (000)",
            "A storm is coming at 02:00:40",
            "teaches",
        ):
            assert said in text, said
        assert "60  connections never below 99 %" in text and "40  admission set" in text
        assert "Enter" in text and "to start the drill" not in text  # the instructor's clock starts it
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="the fleet")
        TinyFeed(app, served=SERVED)  # a reconnect: the hello again
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_the_briefing_is_a_trainees_and_esc_leaves_it() -> None:
    from console.ui.screens.briefing import BriefingScreen
    from console.ui.screens.main import MainScreen

    instructor = attached_app(instructor=True)  # the instructor serves the drill: straight to the fleet
    async with instructor.run_test(size=SIZE) as pilot:
        TinyFeed(instructor, served=SERVED).run(3)
        await fleet_ready(instructor)
        await pilot.pause()
        assert isinstance(instructor.screen, MainScreen)
    plain = attached_app()  # a fleet that is no drill: no briefing
    async with plain.run_test(size=SIZE) as pilot:
        TinyFeed(plain).run(3)
        await fleet_ready(plain)
        await pilot.pause()
        assert isinstance(plain.screen, MainScreen)
    trainee = attached_app()
    async with trainee.run_test(size=SIZE) as pilot:
        TinyFeed(trainee, served=SERVED).run(3)
        await wait_for(lambda: isinstance(trainee.screen, BriefingScreen), what="the briefing")
        await pilot.press("escape")
        await wait_for(lambda: isinstance(trainee.screen, MainScreen), what="the fleet")


#: The served drill's end as the stream sent it: a hello after it carries it (`drill.ended`).
ENDED = {
    "type": "event",
    "time_s": 60,
    "kind": "drill",
    "message": "02:01:00 the drill's time is up (A tiny storm)",
    "data": {"drill": "tiny", "ended": True},
}


async def test_a_trainee_attaching_after_the_drills_end_reads_that_it_ended_not_its_briefing() -> None:
    """Found attaching a trainee late: the briefing of a drill whose time was up stood in front of the
    fleet, as if it were about to start. A hello after the end carries the end: the console tells it,
    as it tells the end to a trainee who was there, and opens on the fleet. Told once: a resume that
    replays the end event after the hello does not tell it again."""
    from console.ui.screens.briefing import BriefingScreen
    from console.ui.screens.main import MainScreen

    app = attached_app()
    async with app.run_test(size=SIZE) as pilot:
        feed = TinyFeed(app, served={**SERVED, "ended": ENDED})
        feed.run(3)
        await fleet_ready(app)
        await pilot.pause()
        assert not any(isinstance(screen, BriefingScreen) for screen in app.screen_stack)
        assert isinstance(app.screen, MainScreen)
        feed.event(Event.model_validate(ENDED))  # a resume's replay of the same end
        await pilot.pause()
        shown = [(n.title, n.message) for n in app._notifications]
        assert shown == [("drill", "02:01:00 the drill's time is up (A tiny storm)")]


@pytest.mark.parametrize("instructor", [False, True], ids=["trainee", "instructor"])
async def test_the_palette_reopens_the_served_drills_briefing(instructor: bool) -> None:
    """Found as a trainee who pressed Enter too fast: once dismissed, the briefing (the story, the
    objectives and their points) could not be read again. The palette's "Show the drill briefing" reopens
    it on a console attached to a served drill, the instructor's too; Esc goes back to the fleet. A fleet
    that is no drill has no briefing, and no such command."""
    from console.ui.screens.briefing import BriefingScreen
    from console.ui.screens.main import MainScreen

    app = attached_app(instructor)
    async with app.run_test(size=SIZE) as pilot:
        TinyFeed(app, served=SERVED).run(3)
        await past_the_briefing(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"drill briefing")
        await wait_for(lambda: _hits(app) >= 1, what="the palette's hits")
        assert _hit_titles(app)[0] == "Show the drill briefing", _hit_titles(app)
        await pilot.press("enter")
        await wait_for(lambda: isinstance(app.screen, BriefingScreen), what="the briefing again")
        await pilot.pause()
        text = str(app.screen.query_one("#briefing-text").render())
        assert "A storm is coming at 02:00:40" in text and "40  admission set" in text
        await pilot.press("escape")
        await wait_for(lambda: isinstance(app.screen, MainScreen), what="back to the fleet")
    plain = attached_app(instructor)
    async with plain.run_test(size=SIZE) as pilot:
        TinyFeed(plain).run(3)
        await fleet_ready(plain)
        titles = [title for title, _, _ in console_commands(["dark"], instructor, drill=False)]
        assert "Show the drill briefing" not in titles
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"drill briefing")
        await pilot.pause()
        assert "Show the drill briefing" not in (_hit_titles(plain) if _hits(plain) else [])


async def test_a_trainee_attached_after_the_drills_end_is_offered_no_action_and_sends_none() -> None:
    """Review: actions went through after a drill had ended. An attached console whose hello (or stream)
    says the drill's time is up offers no action key and says why when one is pressed, sending nothing;
    the server refuses them too (tests/drills/test_serve.py)."""
    from textual.widgets import Footer

    from .fake_actions import FakeFleetApi
    from .test_narrow import shown_keys

    api = FakeFleetApi()
    app = ConsoleApp(
        clock=lambda: _EPOCH_WALL_S + 30.4, remember_theme=False, theme_name="dark", admin=api.client()
    )
    async with app.run_test(size=SIZE) as pilot:
        TinyFeed(app, served={**SERVED, "ended": ENDED}).run(3)
        await fleet_ready(app)
        await pilot.pause()
        assert app.actions.disabled_reason == "the drill has ended"
        words = {key.description for key in shown_keys(app.screen.query_one(Footer))}
        assert "quit" in words and not words & {"drain", "rollout", "halt", "admission", "capacity"}, words
        await pilot.press("d")
        await wait_for(lambda: bool(app._notifications), what="the refusal said")
        (said,) = [n.message for n in app._notifications if "drain" in n.message]
        assert said == "drain: the drill has ended", said
        assert api.sent == []
