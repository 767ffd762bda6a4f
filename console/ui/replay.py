"""`stormdeck replay FILE`: the same console, read-only, fed from a recording (issue #5, section 4).

The console is the live one (`ConsoleApp`), its stream a `ConsoleReplayFeed` over a `ReplaySource`; this
module adds the controls — pause, step ±1 frame, seek to a time, speed ×1/×5/×20/×60, jump to the
next/previous alarm, action or event (an injection, a drill's line or hint) — and the timeline bar with
the recording's markers. A jump starts a fresh model (the replay sends the minute before the landing
point, so the charts have their recent past).
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Input

from console.errors import InputError
from console.guards import Thresholds
from console.model.alarm_source import console_model
from console.model.alarms import Acknowledgements, AlarmSource
from console.model.history import FleetModel
from console.model.link import LinkState
from console.model.node_readings import NodeReadings
from console.model.timeline import parse_seek, seek_placeholder
from console.model.units import ClockFace, counted
from console.protocol import Alarm, Event, Frame
from console.record.clock import recorded_clock
from console.record.reader import Marker, MarkerKind, RecordingReader
from console.record.records import (
    ActionRecord,
    Confirmation,
    action_audit_record,
    confirmation_audit_record,
    injection_audit_record,
)
from console.record.replay import (
    SPEEDS,
    ConsoleReplayFeed,
    ReplayJump,
    ReplaySource,
    damage_note,
    link_of,
)
from console.ui.app import ConsoleApp
from console.ui.commands import action_bindings
from console.ui.screens.audit import AuditScreen
from console.ui.screens.main import MainScreen
from console.ui.screens.node_detail import NodeDetailScreen
from console.ui.widgets.input_bar import InputBar, opening_key
from console.ui.widgets.timeline_bar import LastEntry, TimelineBar, last_entry


class SeekChosen(Message):
    def __init__(self, time_s: float) -> None:
        self.time_s = time_s
        super().__init__()


def _actions_off_the_footer() -> list[Binding]:
    """A replay is read-only: its footers have room for the replay's own keys instead of the actions'
    (which still answer, saying the console is read-only)."""
    return [Binding(b.key, b.action, b.description, show=False) for b in action_bindings()]


#: Beside the seek's input, not in its placeholder: the placeholder went at the first key typed.
SEEK_KEYS = "Enter seeks · Esc closes"


class ReplayScreen(MainScreen):
    """The fleet screen with the timeline bar and a seek field above the footer."""

    DEFAULT_CSS = """
    ReplayScreen TimelineBar { height: auto; padding: 0 1; background: $panel; }  /* a 4th line: damage */
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        opening_key("g", "open_seek", "seek"),
        Binding("escape", "close_bars", "close", show=False),
        *_actions_off_the_footer(),
    ]

    def __init__(self, clock: ClockFace) -> None:
        super().__init__()
        self.clock = clock  # the seek field reads times on the clock the screen shows

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, Footer):
                # As the filter bar (MainScreen): one row at 80×24, the keys beside the input.
                yield InputBar(
                    id="seek-bar",
                    field_id="seek",
                    keys=SEEK_KEYS,
                    placeholder=seek_placeholder(self.clock),
                    leave_to="#nodes",
                )
                yield TimelineBar(id="timeline")
            yield widget

    def action_open_seek(self) -> None:
        self.query_one("#seek-bar", InputBar).open()  # a time kept from a failed seek comes back selected

    def action_close_bars(self) -> None:
        self.query_one("#seek-bar", InputBar).close()
        self.action_close_filter()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "seek":
            return  # the filter: MainScreen's handler runs next (Textual calls each class's handler)
        event.prevent_default()  # not a filter: MainScreen's handler must not see it
        event.stop()
        try:
            time_s = parse_seek(event.value, self.clock)
        except InputError as error:
            # Enter ends the seek either way (user pass): left open with its error, the box took the
            # operator's next `q` as text ("99:99q") instead of quitting. The error is a notification, the
            # box closes; `g` brings the bad time back beside its error, selected, to retype or edit.
            self.query_one("#seek-bar", InputBar).refuse(f"✖ {error}")
            self.notify(f"seek: {error}", severity="error")
            self.action_close_filter()  # focus back on the node table, where `q` quits
            return
        self.post_message(SeekChosen(time_s))
        event.input.value = ""
        self.action_close_bars()


class ReplayNodeScreen(NodeDetailScreen):
    """A node's screen in a replay: its footer, too, shows the replay's keys, not the actions'."""

    BINDINGS: ClassVar[list[BindingType]] = _actions_off_the_footer()


def _marker_bindings() -> list[Binding]:
    return [
        # Short words: with "next alarm" … "prev action" the footer at 160 columns ended at "} next".
        Binding("right_square_bracket", "marker('alarm', 1)", "alarm ▸"),
        Binding("left_square_bracket", "marker('alarm', -1)", "◂ alarm"),
        Binding("right_curly_bracket", "marker('action', 1)", "action ▸"),
        Binding("left_curly_bracket", "marker('action', -1)", "◂ action"),
        # Off the footer (full at 160 columns): the timeline bar's controls line and help say them.
        Binding(
            "right_parenthesis",
            "marker('event', 1)",
            "event ▸",
            show=False,
            tooltip="next injection or drill event (story line, hint)",
        ),
        Binding(
            "left_parenthesis",
            "marker('event', -1)",
            "◂ event",
            show=False,
            tooltip="previous injection or drill event (story line, hint)",
        ),
    ]


#: The link states a replay shows (anything else — a failed source — is left as it is).
_REPLAY_LINKS = (LinkState.LIVE, LinkState.PAUSED)


class ReplayApp(ConsoleApp):
    AUDIT_FROM = "the recording"  # a replay asks no server (action_audit)
    BINDINGS: ClassVar[list[BindingType]] = [
        # Acknowledging a replay's alarms is seldom wanted: `A` stays (help lists it), off the footer, which
        # the replay's own keys fill at 160 columns.
        *[
            Binding(b.key, b.action, b.description, show=False) if b.action == "acknowledge_all" else b
            for b in ConsoleApp.BINDINGS
            # Not ctrl+r: a replay has no link to retry (it read "the link is not waiting to reconnect"),
            # and help listed it all the same.
            if isinstance(b, Binding) and b.action != "reconnect_now"
        ],
        Binding("space", "toggle_pause", "pause"),
        Binding("full_stop", "step(1)", "+1 frame"),
        Binding("comma", "step(-1)", "−1 frame"),
        Binding("x", "next_speed", "speed"),
        *[
            Binding(str(i + 1), f"speed({speed:g})", f"×{speed:g}", show=False)
            for i, speed in enumerate(SPEEDS)
        ],
        *_marker_bindings(),
    ]
    #: Nothing told as it plays: a seek or the prefill feeds a minute of a recording's events at once.
    told_kinds: ClassVar[frozenset[str]] = frozenset()

    def __init__(
        self,
        replay: ReplaySource,
        thresholds: Thresholds | None = None,
        theme_name: str | None = None,
        **kwargs,
    ) -> None:
        self.replay = replay
        self.shared_thresholds = thresholds
        self.markers = replay.recording.markers()
        self._damage_told = False
        self._bar_entries: list[LastEntry] | None = None  # (`_entries`)
        # What the operator acknowledged while watching: every seek starts a fresh model, and its alarms
        # shouted again; kept here, an acknowledged spell stays so wherever the replay goes.
        self.acknowledged = Acknowledgements()
        # The feed stamps arrivals with the console's clock, so the header's age reads the same clock.
        feed = ConsoleReplayFeed(replay, on_jump=self._on_jump, clock=kwargs.get("clock", time.time))
        # One clock on screen, the one the recorded console showed: a drill's replay reads the drill's.
        kwargs.setdefault("clock_face", recorded_clock(replay.recording.header))
        super().__init__(
            model=self._fresh_model(), source=feed, theme_name=theme_name, read_only=True, **kwargs
        )
        self.title = f"stormdeck replay · {replay.recording.path.name}"

    def get_default_screen(self) -> Screen:
        return ReplayScreen(self.clock_face)

    def on_mount(self) -> None:
        # (ConsoleApp.on_mount runs too: Textual calls each class's handler.) Started paused, the console
        # still shows where it stands: the first frame.
        if self.replay.status().paused and self.replay.status().frame_count:
            self.replay.step(0)

    def form_help_sections(self) -> list[tuple[str, list[BindingType]]]:
        """None: a replay takes no action, so opens no form, big-change check or verdict (help listed their
        keys); the fleet section's action keys say the actions are off."""
        return []

    # --- what the feed says ------------------------------------------------------------------------------

    def _fresh_model(self) -> FleetModel:
        model = console_model(self.shared_thresholds, self.acknowledged)
        assert model.alarm_source is not None
        model.alarm_source = recorded_raise_times(model.alarm_source, self.replay.recording)
        return model

    def _on_jump(self, _: ReplayJump) -> None:
        self.model = self._fresh_model()  # what follows is a fresh history
        self.model.apply(link_of(self.replay.status(), self.clock()))  # still playing, or held

    # --- rendering ---------------------------------------------------------------------------------------

    def refresh_views(self) -> None:
        super().refresh_views()
        self.show_timeline()

    def _tick(self) -> None:
        super()._tick()
        self.show_timeline()

    def show_timeline(self) -> None:
        self._sync_link()
        self._tell_damage()
        screen = self.fleet_screen()
        for bar in screen.query(TimelineBar) if screen is not None else []:
            # From the recording at the playhead, not from the records played: a `stormdeck record`
            # recording's actions are the stream's events, which never reached the bar.
            last = last_entry(self.replay.last_audit_record(), self.clock_face)
            bar.show(self.replay.status(), self.markers, self.palette, last, self.clock_face, self._entries())

    def _entries(self) -> list[LastEntry]:
        """Every audit entry the bar can say, once: its counts are fitted to the widest."""
        if self._bar_entries is None:
            said = (last_entry(record, self.clock_face) for _, record in self.replay.audit_timeline())
            self._bar_entries = [entry for entry in said if entry is not None]
        return self._bar_entries

    def _sync_link(self) -> None:  # (on every tick and control: pause, resume and the end are the app's)
        """Held or at its end, the replay sends no frames and none are late: the header says so instead
        of counting the frames' age up to a failing link."""
        wanted = link_of(self.replay.status(), self.clock())
        link = self.model.link
        now = (wanted.state, wanted.reason, wanted.replay_speed)
        if now != (link.state, link.reason, link.replay_speed) and link.state in _REPLAY_LINKS:
            self.model.apply(wanted)

    def _tell_damage(self) -> None:
        """Once, when the replay ends at a damaged record (played up to it, or a seek or step past it cut
        the recording there): what is wrong, as the reader says it; the timeline bar keeps saying it."""
        status = self.replay.status()
        note = damage_note(status)
        clock = self.clock_face.text
        if note is not None and status.finished and not self._damage_told:
            self._damage_told = True
            self.notify(
                f"{note} — the replay stops at {clock(status.time_s)}",
                title="damaged recording",
                severity="error",
                timeout=30,
            )

    # --- controls (each takes effect at once; the feed sends what it changes) --------------------------

    def action_toggle_pause(self) -> None:
        self.replay.toggle_pause()
        self.show_timeline()

    def action_step(self, frames: int) -> None:
        self.replay.step(frames)
        self.show_timeline()

    def action_next_speed(self) -> None:
        self.replay.next_speed()
        self.show_timeline()

    def action_speed(self, speed: float) -> None:
        self.replay.set_speed(speed)
        self.show_timeline()

    def action_marker(self, kind: MarkerKind, direction: int) -> None:
        move = self.replay.next_marker if direction > 0 else self.replay.previous_marker
        marker = move(kind)
        clock = self.clock_face.text
        if marker is None:
            where = "after" if direction > 0 else "before"
            self.notify(f"no {kind} {where} {clock(self.replay.status().time_s)}")
        else:
            self.notify(marker_notice(marker, self.clock_face))
        self.show_timeline()

    async def action_audit(self) -> None:
        """`L`: the recording's actions — every attempt with its verdict and outcome, every confirmation —
        and the instructor's injections, as the audit panel lists a server's log, at the times this
        replay's clock shows; read-only, and asked of nobody (a replay has no server)."""
        if any(isinstance(screen, AuditScreen) for screen in self.screen_stack):
            return
        recording = self.replay.recording
        trail = recording.audit_trail()
        records = [
            {**_audit_record(record), "time_text": self.clock_face.text(record.time_s)} for record in trail
        ]
        screen = AuditScreen(
            self.palette, time_column=self.clock_face.label, waiting="reading the recording…"
        )
        await self.push_screen(screen)
        attempts = sum(isinstance(record, ActionRecord) for record in trail)
        injections = sum(isinstance(record, Event) for record in trail)
        held = (
            f"{counted(attempts, 'attempt')}, "
            f"{counted(len(trail) - attempts - injections, 'confirmation')}"
            + (f", {counted(injections, 'injection')}" if injections else "")
        )
        screen.show(records, f"{recording.path.name}: {held} recorded · read-only (a replay asks no server)")

    def on_seek_chosen(self, message: SeekChosen) -> None:
        span = self.replay.status().span_s
        clock = self.clock_face.text
        self.replay.seek(message.time_s)
        if span is not None and not span[0] <= message.time_s <= span[1]:
            landed = self.replay.status().time_s
            self.notify(
                f"{clock(message.time_s)} is outside the recording "
                f"({clock(span[0])}–{clock(span[1])}): at {clock(landed)}"
            )
        self.show_timeline()

    def open_node(self, node_id: str) -> None:
        self.push_screen(ReplayNodeScreen(node_id, None))  # a recording has no server to ask for history


def _audit_record(record: ActionRecord | Confirmation | Event) -> dict[str, Any]:
    if isinstance(record, ActionRecord):
        return action_audit_record(record)
    if isinstance(record, Confirmation):
        return confirmation_audit_record(record)
    return injection_audit_record(record)


def marker_notice(marker: Marker, clock: ClockFace) -> str:
    """What a jump to `marker` says: "0:00:41 alarm: lockstep_waves warning", "0:01:00 action: drain gw-0003 →
    blocked" (an action's label says what became of it — its level after it read "→ blocked blocked"),
    "drill: 02:00:30 power fails" (a drill's line says its own time)."""
    at = clock.text(marker.time_s)
    if marker.kind == "event":
        return f"{'' if marker.label.startswith(at) else at + ' '}{marker.level}: {marker.label}"
    if marker.kind == "action":
        return f"{at} action: {marker.label}"
    return f"{at} {marker.kind}: {marker.label} {marker.level}".strip()


def recorded_raise_times(source: AlarmSource, recording: RecordingReader) -> AlarmSource:
    """The console's alarms over a replay, raised when the recording says they were. After a jump the
    model's engine starts afresh on the prefill (the minute before the landing point), so an alarm up
    since long before reads as raised at the prefill's first frame; the recording's alarm events say
    when the alarm that was up then really began. Alarms the recording does not have up at that moment
    (judged otherwise here) keep the engine's time."""

    def active_after(frame: Frame, nodes: NodeReadings) -> list[Alarm]:
        alarms = source(frame, nodes)
        for i, alarm in enumerate(alarms):
            raised_s = recording.alarm_raised_s(frame.epoch, alarm.name, alarm.node, alarm.since_s)
            if raised_s is not None and raised_s < alarm.since_s:
                alarms[i] = alarm.model_copy(update={"since_s": raised_s})  # the engine's own stays as is
        return alarms

    return active_after
