"""The console app: holds the model, feeds it from a stream source, and asks the active screen to render.

Screens render the model and post intents; this class turns intents into model or view changes. It never
parses a frame (the client does) nor judges one (the model and the alarm rules do).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import ClassVar, Protocol

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from console.client.actions import ActionAnswer
from console.client.admin import AdminClient
from console.guards import FleetCapacity, Thresholds
from console.model.actions.answer import ActionReading, read_answer
from console.model.actions.refusals import DRILL_ENDED
from console.model.alarm_source import console_model
from console.model.history import FleetModel
from console.model.link import (
    LinkState,
    LinkStatus,
    Malformed,
    Received,
    StreamItem,
    lost_link_text,
    never_reached_text,
)
from console.model.nodes import SORT_KEYS, NodeFilter, NodeQuery
from console.model.offered import not_on_this_fleet
from console.model.units import FLEET_CLOCK, ClockFace, counted, drill_clock
from console.protocol import ActionKind, Event, Hello, ServedDrill
from console.ui import config
from console.ui.actions import ActionRecorder, ConsoleActions
from console.ui.commands import ConsoleCommands, act_binding, act_command, action_bindings, console_commands
from console.ui.intents import FilterChosen, ScreenReady
from console.ui.screens.action_form import ActionForm
from console.ui.screens.audit import AuditScreen
from console.ui.screens.briefing import BriefingScreen, ServedBriefingScreen
from console.ui.screens.change_check import ChangeCheck
from console.ui.screens.help import HelpScreen, action_notes, actions_off_note, noted
from console.ui.screens.main import MainScreen
from console.ui.screens.node_detail import NodeDetailScreen
from console.ui.screens.verdict_dialog import VerdictDialog
from console.ui.themes import DEFAULT_THEME, Palette, ThemeFile, load_themes
from console.ui.widgets.alarms_panel import AlarmsPanel
from console.ui.widgets.node_table import NodeTable

logger = logging.getLogger(__name__)


class StreamSource(Protocol):
    """Anything that pushes stream items: the live client, a recording, a synthetic fleet."""

    async def run(self, sink: Callable[[StreamItem], None]) -> None: ...


def _said(body: dict) -> str:
    """What a server's answer says: its message, else a problem's detail or title."""
    return str(body.get("message") or body.get("detail") or body.get("title") or "")


def _clock_said(body: dict) -> str:
    return "paused" if body.get("paused") else "running"


#: Quitting over an open form or dialog asks for a second quit within this many seconds.
QUIT_AGAIN_S = 3.0
#: How long a told event (a drill's line; a hint over a screen without its hint line) stays on screen,
#: wall seconds. Textual's default 5 s was gone before a trainee, busy in a form or reading the
#: objectives, had read a hint of twenty words; the console's failures stay 30 s.
TOLD_S = 30

#: Help's row for Textual's own Ctrl+Q (App.BINDINGS, a priority binding): Ctrl+C says "press ctrl+q to
#: quit", and in a text field (filter, seek, a form) `q` is typed, so help names it beside `q`.
CTRL_Q_HELP = Binding("ctrl+q", "quit", "quit, also from a text field (q is typed)", show=False)


class ConsoleApp(App[None]):
    TITLE = "stormdeck"
    #: Where `L`'s audit panel reads, as the palette and help say it.
    AUDIT_FROM = "the server's audit log"
    # Textual draws a placeholder in $text-disabled (38 %: 2.7–3.5:1 here); ours say what to type, so they
    # are read at 4.5:1 or better in every theme (tests/ui/test_contrast.py).
    CSS = "Input > .input--placeholder { color: $text-muted; }"
    COMMANDS = App.COMMANDS | {ConsoleCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "quit"),
        Binding("question_mark,f1", "help", "help", key_display="?"),
        # Off the footer, which is full at 160 columns; the help screen and the palette list it.
        Binding("t", "next_theme", "theme", show=False),
        Binding("A", "acknowledge_all", "ack all"),
        Binding("L", "audit", "audit log"),
        # Off the footer (full at 160 columns); the header says it while the link is down.
        Binding("ctrl+r", "reconnect_now", "reconnect now", show=False),
    ]

    def __init__(
        self,
        model: FleetModel | None = None,
        source: StreamSource | None = None,
        theme_name: str | None = None,
        clock: Callable[[], float] = time.time,
        config_path: Path | None = None,
        remember_theme: bool = True,
        read_only: bool = False,
        admin: AdminClient | None = None,
        capacity: FleetCapacity | None = None,
        guard_thresholds: Thresholds | None = None,
        action_recorder: ActionRecorder | None = None,
        instructor: bool = False,
        clock_face: ClockFace = FLEET_CLOCK,
    ) -> None:
        super().__init__()
        # How the screens show fleet times: the fleet's clock, or a drill's own (console.ui.drill) — also
        # when the stream's hello says it is a served drill's (`greet`).
        self.clock_face = clock_face
        self._own_clock_face = clock_face
        self._briefed = False  # a served drill's briefing was shown (`greet`)
        self._told_end = False  # a served drill's end was told (`tell`): from the stream or a hello
        self._hints: list[Event] = []  # a served drill's hints heard so far (`hear_hint`)
        self.instructor = instructor  # the palette offers injections (console.ui.inject; admin token)
        self.model = model or console_model()
        self.source = source
        self.clock = clock
        self.config_path = config_path
        self.remember_theme = remember_theme
        self.read_only = read_only
        self.admin = admin
        # capacity: for the console's own drain planner when the server offers none (console.guards)
        self.actions = ConsoleActions(
            self, admin, read_only, capacity, guard_thresholds or Thresholds(), action_recorder
        )
        self.query_state = NodeQuery()
        self.theme_files: dict[str, ThemeFile] = load_themes((config.user_themes_dir(),))
        remembered = config.load_config(config_path).get("theme")
        chosen = theme_name or (remembered if isinstance(remembered, str) else None) or DEFAULT_THEME
        self._initial_theme = chosen if chosen in self.theme_files else DEFAULT_THEME
        self.palette: Palette = self.theme_files[self._initial_theme].palette
        self._refresh_pending = False
        self._stale_shown: int | None = None  # the stale mark the panels were last drawn with
        self._quit_asked_at = -QUIT_AGAIN_S
        self.after_paint: Callable[[], None] | None = None  # the bench measures frame → painted with it

    async def action_quit(self) -> None:
        """Ctrl+Q (or the palette's Quit) over what a quit would lose (`quit_warning`): the first press says
        so, a second within 3 s quits."""
        now = time.monotonic()
        warning = self.quit_warning()
        if warning is not None and now - self._quit_asked_at > QUIT_AGAIN_S:
            self._quit_asked_at = now
            self.notify(f"{warning}; quit again within 3 s to quit", severity="warning")
            return
        await super().action_quit()

    def quit_warning(self) -> str | None:
        """What quitting now would lose, or None to quit at once: an open action form or dialog loses
        what was typed — and on the embedded simulator, the fleet."""
        if any(isinstance(screen, ActionForm | VerdictDialog | ChangeCheck) for screen in self.screen_stack):
            return "an action is open: Esc cancels it"
        return None

    def get_default_screen(self) -> Screen:
        return MainScreen()

    def on_mount(self) -> None:
        for theme_file in self.theme_files.values():
            self.register_theme(theme_file.textual)
        self.theme_changed_signal.subscribe(self, self._on_theme_changed)
        self.theme = self._initial_theme
        self.set_interval(0.5, self._tick)
        if self.source is not None:
            self.run_worker(self.source.run(self.feed), name="stream", exclusive=True, exit_on_error=False)

    async def on_unmount(self) -> None:
        if self.admin is not None:
            await self.admin.aclose()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker of ours that fails is said, never swallowed (they run with exit_on_error=False, so the
        console stays up): the stream's failure as the link stopped, rather than going quietly stale;
        any other's — an action's flow above all — as an error notification, logged with its traceback.
        An exception in the drain flow once closed the form with nothing sent and nothing said."""
        worker, error = event.worker, event.worker.error
        if event.state is not WorkerState.ERROR or error is None:
            return
        reason = f"{type(error).__name__}: {error}"
        if worker.name == "stream":
            self.feed(LinkStatus(LinkState.STOPPED, reason=reason[:120], at_s=self.clock()))
            return
        what = worker.name or worker.group
        logger.error("the console's %s failed", what, exc_info=error)
        self.notify(
            f"{reason[:300]} — the console failed here; the audit log (L) shows what reached the server",
            title=f"{what}: failed",
            severity="error",
            timeout=30,
        )

    # --- feeding the model -----------------------------------------------------------------------------

    #: The stream's events told as notifications as they arrive: a served drill's story (`drill`: its
    #: timeline's lines, and its end). They name no node, and only the node screen lists events: on
    #: `attach` to a served drill they reached the model and were shown nowhere. Its hints have the fleet
    #: screen's hint line (`hear_hint`), as in the drill console: as toasts they stacked over the panels.
    told_kinds: ClassVar[frozenset[str]] = frozenset({"drill"})

    def tell(self, event: Event) -> None:
        if event.kind == "hint":
            self.hear_hint(event)
        if event.kind not in self.told_kinds:
            return
        if event.kind == "drill" and event.data.get("ended"):
            # Once: a hello after the end carries it (`greet`), and a resume may then replay the event.
            if self._told_end:
                return
            self._told_end = True
        self.notify(event.message, title=event.kind, timeout=TOLD_S)

    def hear_hint(self, hint: Event) -> None:
        """A served drill's hint from the stream: kept, and shown (`show_hints`). Once: a resume after a
        lost link may send it again."""
        if any((told.time_s, told.message) == (hint.time_s, hint.message) for told in self._hints):
            return
        self._hints.append(hint)
        self.show_hints(hint)

    def hints_told(self) -> Sequence[Event]:
        """Every hint told so far, oldest first: the hint line's."""
        return self._hints

    def show_hints(self, newest: Event) -> None:
        """On the fleet screen's hint line; over another screen (a node's, help, a form, the briefing), a
        notification as well, for a short while: the line is out of sight there."""
        for screen in self.screen_stack:  # (under a node's screen too: there on the way back)
            if isinstance(screen, MainScreen):
                screen.show_hints(self.hints_told(), self.clock_face)
        if not isinstance(self.screen, MainScreen):
            title = f"hint · {self.clock_face.text(newest.time_s)}"
            self.notify(f"{newest.message}\n(kept on the hint line)", title=title, timeout=TOLD_S)

    #: A trainee's console shows a served drill's briefing once, on the first hello naming the drill (the
    #: single-player drill console shows its own, before its clock runs).
    briefs_served_drill: ClassVar[bool] = True

    def greet(self, hello: Hello) -> None:
        """A stream's hello: attached to a served drill, every time on screen reads the drill's clock, the
        one its lines and hints speak ("02:00:45"), as the single-player drill console's does — the header
        said `fleet clock 0:00:45` beside them. A trainee reads the drill's briefing first, once: on
        `attach` it was shown nowhere (the instructor, who serves the drill, goes straight to the fleet).
        Attached after the drill's end, the console tells the end (the hello carries it), as it told it to
        those who were there: its briefing stood in front of the fleet as if the drill were about to start."""
        served = hello.drill
        self.clock_face = self._own_clock_face if served is None else drill_clock(served.clock_start_s)
        if served is not None and served.ended is not None:
            self.tell(served.ended)  # (once, however many hellos carry it)
        if served is None or self._briefed or self.instructor or not self.briefs_served_drill:
            return
        self._briefed = True  # a reconnect's hello does not bring it back
        if served.ended is None and (served.briefing or served.objectives):
            self.push_screen(ServedBriefingScreen(served))

    def drill_over(self) -> str | None:
        """Why actions are off once the served drill's time is up (`DRILL_ENDED`), or None: the stream's end
        event or a hello carrying it says so, and the server refuses them from then on."""
        return DRILL_ENDED if self.model.drill_ended is not None else None

    def briefed_drill(self) -> ServedDrill | None:
        """The drill whose briefing the palette offers again: the served drill the hello names."""
        return self.model.drill

    def briefing_screen(self, served: ServedDrill) -> BriefingScreen:
        """The briefing the palette reopens: a trainee's (Enter or Esc to the fleet)."""
        return ServedBriefingScreen(served)

    def action_show_briefing(self) -> None:
        """The palette's "Show the drill briefing": once dismissed, it could not be read again."""
        served = self.briefed_drill()
        if served is None:
            self.notify("no drill here: the stream's hello named none", severity="warning")
            return
        if not any(isinstance(screen, BriefingScreen) for screen in self.screen_stack):
            self.push_screen(self.briefing_screen(served))

    def feed(self, item: StreamItem) -> None:
        if isinstance(item, LinkStatus):
            self._tell_lost_link(item)
        self.model.apply(item)
        if isinstance(item, Received) and isinstance(item.message, Event):
            self.tell(item.message)
        elif isinstance(item, Received) and isinstance(item.message, Hello):
            self.greet(item.message)
        redraw = isinstance(item, Malformed | LinkStatus) or (
            isinstance(item, Received) and not isinstance(item.message, Event)
        )
        if redraw and not self._refresh_pending:
            self._refresh_pending = True
            self.call_later(self._flush_views)

    def _tell_lost_link(self, status: LinkStatus) -> None:
        """Once per loss: a live link failing, or the first try failing (never live yet) — not each
        attempt after it, which the header counts."""
        was = self.model.link.state
        first_try = was is LinkState.CONNECTING and status.attempt == 1
        if status.state is LinkState.RECONNECTING and (was is LinkState.LIVE or first_try):
            url = getattr(self.source, "base_url", None)
            if not status.reached:  # nothing lost: no stream, no last frame yet
                text, title = never_reached_text(status.reason, url), "fleet API not reached"
            else:
                text, title = lost_link_text(status.reason, url), "link lost"
            self.notify(text, title=title, severity="error", timeout=30)

    def _flush_views(self) -> None:
        self._refresh_pending = False
        self.refresh_views()

    def fleet_screen(self) -> MainScreen | NodeDetailScreen | None:
        """The fleet view on top — under a form or a dialog too: an operator deciding in a form sees the
        fleet as it is now, not as it was when the form opened."""
        for screen in reversed(self.screen_stack):
            if isinstance(screen, MainScreen | NodeDetailScreen):
                return screen if screen.ready else None
        return None

    def refresh_views(self) -> None:
        screen = self.fleet_screen()
        if screen is None or not self.is_running:
            # (not running: shutting down, the screens' children are being removed: a frame that came in
            # then once drew into a GaugeBar whose gauges were already gone — NoMatches at exit, under load)
            return
        now_s = self.clock()
        self._stale_shown = self._stale_mark(now_s)
        if isinstance(screen, MainScreen):
            screen.show_model(
                self.model,
                self.query_state,
                now_s,
                self.palette,
                self.actions.disabled_reason,
                self.clock_face,
                self.clock_time_s(),
            )
        elif isinstance(screen, NodeDetailScreen):
            screen.show_model(
                self.model,
                now_s,
                self.palette,
                self.actions.disabled_reason,
                self.clock_face,
                self.clock_time_s(),
            )
        if self.after_paint is not None:
            self.call_after_refresh(self.after_paint)

    def clock_time_s(self) -> float | None:
        """The fleet second the header's clock reads: None, the newest frame's (a drill's app: its own)."""
        return None

    def _tick(self) -> None:
        """Staleness and the reconnect countdown move even when no frame arrives — and so do the data
        panels' "stale" marks: when the view turns stale, each second it stays so, and when it is live."""
        now_s = self.clock()
        if self._stale_mark(now_s) != self._stale_shown:
            self.refresh_views()
            return
        screen = self.fleet_screen()
        if screen is not None:
            screen.show_header(self.model, now_s, self.palette, self.clock_face, self.clock_time_s())

    def _stale_mark(self, now_s: float) -> int | None:
        """What the panels' stale marks say (whole seconds, `stale_note`), or None while the view is live."""
        age = self.model.stale_s(now_s)
        return None if age is None else int(age)

    # --- themes ----------------------------------------------------------------------------------------

    def _on_theme_changed(self, theme: object) -> None:
        name = getattr(theme, "name", None)
        if name in self.theme_files:
            self.palette = self.theme_files[name].palette
            if self.remember_theme:
                config.remember_theme(name, self.config_path)
        self.refresh_views()

    def action_switch_theme(self, name: str) -> None:
        if name not in self.theme_files:
            self.notify(f"theme {name!r} is not one of {', '.join(self.theme_files)}", severity="error")
            return
        self.theme = name
        self.notify(f"theme {name}", timeout=2)

    def action_next_theme(self) -> None:
        names = list(self.theme_files)
        current = names.index(self.palette.name) if self.palette.name in names else -1
        self.action_switch_theme(names[(current + 1) % len(names)])

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        # Our themes come with our own command (they carry level colours Textual's themes lack).
        for command in super().get_system_commands(screen):
            if command.title.lower() not in ("theme", "change theme"):
                yield command

    # --- node table ------------------------------------------------------------------------------------

    def set_query(self, query: NodeQuery) -> None:
        self.query_state = query
        self.refresh_views()

    def set_filter(self, node_filter: NodeFilter) -> None:
        q = self.query_state
        self.set_query(NodeQuery(q.sort_key, q.descending, node_filter))

    def action_sort(self) -> None:
        self.set_query(self.query_state.next_sort())

    def sort_by(self, key: str) -> None:
        q = self.query_state
        descending = not q.descending if key == q.sort_key else key not in ("id", "state")
        self.set_query(NodeQuery(key, descending, q.filter))

    def action_sort_by(self, key: str) -> None:
        if key in SORT_KEYS:
            self.sort_by(key)

    def action_reverse_sort(self) -> None:
        q = self.query_state
        self.set_query(NodeQuery(q.sort_key, not q.descending, q.filter))

    def action_alarming_only(self) -> None:
        f = self.query_state.filter
        self.set_filter(NodeFilter(f.states, f.id_pattern, not f.alarming_only))

    def action_clear_filter(self) -> None:
        self.set_filter(NodeFilter())

    def open_node(self, node_id: str) -> None:
        self.push_screen(NodeDetailScreen(node_id, self._fetch_node if self.admin else None))

    async def _fetch_node(self, node_id: str) -> tuple[object, int]:
        assert self.admin is not None
        payload = await self.admin.node(node_id)
        return payload, self.model.frames_applied

    def on_node_table_opened(self, message: NodeTable.Opened) -> None:
        self.open_node(message.node_id)

    def on_node_table_sort_clicked(self, message: NodeTable.SortClicked) -> None:
        self.sort_by(message.sort_key)

    def on_filter_chosen(self, message: FilterChosen) -> None:
        self.set_filter(message.node_filter)

    def on_screen_ready(self, _: ScreenReady) -> None:
        self.refresh_views()

    def action_open_cursor_node(self) -> None:
        if isinstance(self.screen, MainScreen):
            node_id = self.screen.query_one(NodeTable).cursor_id
            if node_id:
                self.open_node(node_id)

    # --- guarded actions (console.ui.actions runs the flow; the server judges) ---------------------------

    def selected_node_id(self) -> str | None:
        screen = self.screen
        if isinstance(screen, NodeDetailScreen):
            return screen.node_id
        if isinstance(screen, MainScreen):
            # Hidden (a terminal below 80×24, `TooSmallNotice`), its cursor is on a row nobody sees.
            return None if screen.too_small else screen.query_one(NodeTable).cursor_id
        return None

    def action_act(self, kind: str) -> None:
        action = ActionKind(kind)
        if any(worker.group == "action" and not worker.is_finished for worker in self.workers):
            # (from the palette, over an open form or dialog): replacing that flow dropped it silently,
            # its dialog still on screen and taking the typed name — that confirmation was never sent.
            self.notify(
                "finish or cancel the open action first (Esc)", title=action.title, severity="warning"
            )
            return
        self.run_worker(
            self.actions.run(action, self.selected_node_id()),
            name=action.title,  # named: a failure is said as "drain: failed" (on_worker_state_changed)
            group="action",
            exclusive=True,
            exit_on_error=False,
        )

    #: Keys that mean nothing on a drill's briefing (no alarm to acknowledge, no action to audit yet):
    #: its footer read "A ack all  L audit log". Not drawn there, and inert, as `p` is (`DrillApp`).
    NOT_ON_A_BRIEFING = frozenset({"acknowledge_all", "audit"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        on_top = self.screen_stack[-1] if self.screen_stack else None
        if action in self.NOT_ON_A_BRIEFING and isinstance(on_top, BriefingScreen):
            return False
        return super().check_action(action, parameters)

    def action_audit(self) -> None:
        if not any(isinstance(screen, AuditScreen) for screen in self.screen_stack):
            self.run_worker(self.actions.open_audit(), group="audit", exclusive=True, exit_on_error=False)

    # --- the instructor's injections (console.ui.inject; the server checks, audits and applies) ---------

    def action_inject(self, event: str) -> None:

        if self._is_instructor("injections"):
            self.run_worker(self._inject(event), name=f"inject {event}", group="inject", exit_on_error=False)

    async def _inject(self, event: str) -> None:
        """The form, then the server: a refusal of the values (422) back to the form, what was typed kept
        and the server's words in it — as an action's form (console.ui.actions): it closed, the refusal only
        a notification and the words to fix gone with it."""
        from console.ui.inject import InjectForm

        words: str | None = None
        refusal: ActionReading | None = None
        while True:
            form = InjectForm(event, words, refusal)
            body = await self.push_screen_wait(form)
            if body is None:
                return
            words = form.words
            refusal = await self._instructor_post(
                "/v1/sim/inject", body, f"inject {event}", _said, to_form=True
            )
            if refusal is None:
                return

    def action_fleet_clock(self, paused: bool) -> None:
        if self._is_instructor("the fleet clock"):
            work = self._instructor_post("/v1/sim/clock", {"paused": paused}, "fleet clock", _clock_said)
            self.run_worker(work, group="clock", exit_on_error=False)

    def _is_instructor(self, what: str) -> bool:
        from console.client.actions import ActionClient

        if self.instructor and isinstance(self.admin, ActionClient):
            return True
        self.notify(f"{what} needs an instructor's console (attach --instructor)", severity="error")
        return False

    async def _instructor_post(
        self, path: str, body: dict, what: str, said: Callable[[dict], str], to_form: bool = False
    ) -> ActionReading | None:
        """POST with the instructor's token; the server's answer, or its refusal, as a notification — but
        with `to_form`, a refusal of the values (422, `ActionReading.refused_input`) is returned for the
        form instead."""
        from console.client.admin import ApiError

        assert self.admin is not None
        try:
            answer = await self.admin.send("POST", path, body)
        except ApiError as error:
            self.notify(f"{what}: {error}", severity="error")
            return None
        if to_form and isinstance(answer, ActionAnswer) and (reading := read_answer(answer)).refused_input:
            return reading
        if answer.status == 200:
            self.notify(said(answer.body), title=f"{what} · applied")
        else:
            self.notify(_said(answer.body), title=f"{what} · {answer.status}", severity="error")
        return None

    # --- alarms and help -------------------------------------------------------------------------------

    def on_alarms_panel_acknowledge(self, message: AlarmsPanel.Acknowledge) -> None:
        if sum(self.model.alarms.acknowledge(key) for key in message.keys):
            self.refresh_views()

    def action_reconnect_now(self) -> None:
        """Try the server again now instead of at the end of the backoff."""
        retry = getattr(self.source, "retry_now", None)
        if self.model.link.state not in (LinkState.RECONNECTING, LinkState.REFUSED) or retry is None:
            self.notify("the link is not waiting to reconnect")
            return
        retry()

    def action_acknowledge_all(self) -> None:
        count = self.model.alarms.acknowledge_all()
        self.notify(f"acknowledged {counted(count, 'alarm')}")
        self.refresh_views()

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        anywhere: list[BindingType] = []
        for binding in self.BINDINGS:
            anywhere.append(binding)
            if isinstance(binding, Binding) and binding.action == "quit":
                anywhere.append(CTRL_Q_HELP)
        sections = [
            ("anywhere", anywhere),
            *self.mode_help_sections(),
            ("fleet", list(MainScreen.BINDINGS)),
            ("node table", list(NodeTable.BINDINGS)),
            ("alarms", list(AlarmsPanel.BINDINGS)),
            *self.form_help_sections(),
            ("node detail", list(NodeDetailScreen.BINDINGS)),
            ("help", list(HelpScreen.BINDINGS)),
        ]
        home = type(self.screen_stack[0])
        if home is not MainScreen and issubclass(home, MainScreen):  # the replay's screen adds its own keys
            # (less the action keys it hides from its footer: the fleet's section lists them)
            fleet_actions = {binding.action for binding in action_bindings()}
            own = [
                binding
                for binding in home.__dict__.get("BINDINGS", [])
                if not (isinstance(binding, Binding) and binding.action in fleet_actions)
            ]
            sections.insert(2, ("replay", own))
        # The fleet actions that will not act (the console's are off, or this fleet cannot take them) are
        # listed with why.
        notes = action_notes(self.actions.disabled_reason, not_on_this_fleet(self.model.frame))
        by_command = {act_command(kind): note for kind, note in notes.items()}
        commands = [
            (title, noted(help_text, by_command.get(action)))
            for title, help_text, action in console_commands(
                list(self.theme_files), self.instructor, self.briefed_drill() is not None, self.AUDIT_FROM
            )
        ]
        by_binding = {act_binding(kind): note for kind, note in notes.items()}
        self.push_screen(HelpScreen(sections, commands, by_binding))

    def mode_help_sections(self) -> list[tuple[str, list[BindingType]]]:
        """The keys of a mode's own screens (drill mode: its briefing and end screen), for help."""
        return []

    def form_help_sections(self) -> list[tuple[str, list[BindingType]]]:
        """The keys of what an action opens — its form, the big-change check, the verdict — for help; with
        the console's actions off, one row instead, saying none opens and why: help listed their keys in
        full (Enter applies, ^d dry run…) beside action keys each marked "— actions off: …"."""
        off = self.actions.disabled_reason
        if off is not None:
            none_opens = "no form, big-change check or verdict opens"
            return [("action form", [Binding("", "", noted(none_opens, actions_off_note(off)), show=False)])]
        return [
            ("action form", list(ActionForm.BINDINGS)),
            ("big change", list(ChangeCheck.BINDINGS)),
            ("verdict", list(VerdictDialog.BINDINGS)),
        ]

    def on_screen_resume(self) -> None:
        self.refresh_views()
