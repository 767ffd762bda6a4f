"""The command palette: every command the console has, each one an app action.

One table serves the palette and the help screen, so neither can fall behind the other.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import partial

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

from console.model.nodes import SORT_KEYS
from console.model.offered import ROLLOUT_UNDER_WAY
from console.protocol import ActionKind, RolloutStatus
from console.ui.widgets.node_table import COLUMNS

#: (key, action, footer word, palette help): the guarded actions, on the fleet screen and in node detail.
ACTIONS: tuple[tuple[str, ActionKind, str, str], ...] = (
    ("d", ActionKind.DRAIN, "drain", "drain the node under the cursor (pre-filled by the drain planner)"),
    ("u", ActionKind.UNDRAIN, "undrain", "put the node under the cursor back into rotation"),
    ("R", ActionKind.ROLLOUT_START, "rollout", "start a rolling restart (batch, interval, mode)"),
    ("h", ActionKind.ROLLOUT_HALT, "halt", "halt the rollout (always ok when one runs)"),
    ("r", ActionKind.ROLLOUT_RESUME, "resume", "resume a paused or halted rollout"),
    ("a", ActionKind.ADMISSION, "admission", "set admission: rate, burst, ceiling, Retry-After"),
    (
        "c",
        ActionKind.ADD_CAPACITY,
        "capacity",
        "add capacity: provision more nodes (ready after provisioning)",
    ),
)


def act_command(kind: ActionKind) -> str:
    """The app action a guarded action's palette command runs."""
    return f"act('{kind.value}')"


def act_binding(kind: ActionKind) -> str:
    """The action a guarded action's key runs (its binding's, and a footer key's `action`)."""
    return f"app.{act_command(kind)}"


def action_bindings() -> list[Binding]:
    return [Binding(key, act_binding(kind), word) for key, kind, word, _ in ACTIONS]


def not_offered_bindings(not_offered: Collection[ActionKind]) -> frozenset[str]:
    """The bindings' actions a footer does not draw for the fleet actions this fleet cannot take."""
    return frozenset(act_binding(kind) for kind in not_offered)


#: The fleet screen's keys that give way first in a narrow footer while a rollout is under way: finding and
#: ordering nodes can wait; halting cannot.
WHILE_ROLLING_OUT_DISPENSABLE = frozenset({"open_filter", "app.sort"})


def footer_ranks(rollout: RolloutStatus | None) -> tuple[tuple[str, ...], frozenset[str]]:
    """What the fleet screen's footer keeps first and gives way first now (`ConsoleFooter.rank`): while a
    rollout is under way — running, paused or halted — h and r, both, so neither moves as it pauses, and
    / filter and s sort give way before them; at 80 columns h halt had gone after them. Else nothing."""
    if rollout is None or rollout.state not in ROLLOUT_UNDER_WAY:
        return (), frozenset()
    urgent = (act_binding(ActionKind.ROLLOUT_HALT), act_binding(ActionKind.ROLLOUT_RESUME))
    return urgent, WHILE_ROLLING_OUT_DISPENSABLE


def fleet_action_keys(not_offered: Collection[ActionKind] = ()) -> list[str]:
    """The keys of the fleet's own actions (not a node's), in the table's order, less those this fleet
    cannot take (`console.model.offered.not_on_this_fleet`)."""
    return [key for key, kind, *_ in ACTIONS if not kind.needs_node and kind not in not_offered]


def console_commands(
    theme_names: list[str],
    instructor: bool = False,
    drill: bool = False,
    audit_from: str = "the server's audit log",
) -> list[tuple[str, str, str]]:
    """(title, help, action) for every command (and the injections, on an instructor's console; the
    briefing, on a console with a served drill); `audit_from` says where the audit panel reads."""
    commands = [
        ("Help: keys and commands", "list every binding and command", "help"),
        ("Filter nodes…", "state:NAME, id:PATTERN, alarming", "screen.open_filter"),
        ("Filter: alarming nodes only", "toggle showing only alarming nodes", "alarming_only"),
        ("Filter: clear", "show every node", "clear_filter"),
        ("Sort: next column", "cycle the sort column", "sort"),
        ("Sort: reverse", "flip the sort order (S)", "reverse_sort"),
    ]
    # By the column's title, as the table says it ("503/s", not "rejects_per_s"); the field name after.
    titles = {column.key: column.title.strip() for column in COLUMNS if column.key}
    for key in SORT_KEYS:
        title = titles.get(key, key)
        field = f" ({key})" if title != key else ""
        commands.append((f"Sort by {title}", f"order the node table by {title}{field}", f"sort_by('{key}')"))
    commands += [
        ("Open node detail", "the node under the cursor", "open_cursor_node"),
        ("Acknowledge all alarms", "mark every active alarm as seen", "acknowledge_all"),
    ]
    if drill:
        from console.ui.screens.briefing import briefing_commands

        commands += briefing_commands()
    if instructor:
        from console.ui.inject import inject_commands

        # Before the guarded actions: the palette keeps this order among equal matches, and an instructor
        # typing "start" or "resume" is after the drill's clock — it listed "Action: start rollout" first.
        commands += inject_commands()
    commands += [
        (f"Action: {kind.title}", f"{help_text} ({key})", act_command(kind))
        for key, kind, _, help_text in ACTIONS
    ]
    commands.append(("Audit log", f"every action attempt, from {audit_from} (L)", "audit"))
    commands += [
        (f"Theme: {name}", f"switch to the {name} theme (remembered)", f"switch_theme('{name}')")
        for name in theme_names
    ]
    commands.append(("Quit", "leave the console", "quit"))
    return commands


class ConsoleCommands(Provider):
    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = self.app
        names = list(getattr(app, "theme_files", {}))
        instructor = getattr(app, "instructor", False)
        briefed_drill = getattr(app, "briefed_drill", None)
        drill = briefed_drill is not None and briefed_drill() is not None
        audit_from = getattr(app, "AUDIT_FROM", "the server's audit log")
        return [
            (title, help_text, partial(app.run_action, action))
            for title, help_text, action in console_commands(names, instructor, drill, audit_from)
        ]

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
