"""Every node in one line-rendered widget.

A ScrollView that renders only the visible lines, each from a per-row cached Strip: 2000 Sparkline widgets
cost 120–140 ms a frame in a prototype, this costs a few ms (issue #3). The cursor follows a node id, not
a row number, so re-sorting and new frames keep it (and the scroll position) where the operator left it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from console.figures import beside_limit
from console.model.downsample import SPARK_MIN_SPAN_SHARE, spark_blocks
from console.model.gauges import level_at_least, node_cpu_level, node_level, rejects_level
from console.model.nodes import NodeQuery, handshake_p99_text
from console.model.thresholds import GaugeThresholds, Level
from console.protocol import NodeStatus
from console.ui.themes import LEVEL_GLYPHS, Palette

SPARK_CELLS = 14


@dataclass(frozen=True)
class Column:
    name: str  # which cell of a row (`NodeTable._row`)
    key: str  # a sort key of console.model.nodes, or "" when the column does not sort
    title: str
    width: int
    right: bool = True


#: CPU right after the connections: it is the abort criterion, and at 80 columns the table shows about 45
#: cells — before, the CPU column began at cell 66 and an on-call engineer on a small terminal never saw it.
COLUMNS = (
    Column("node", "id", "node", 11, right=False),
    Column("state", "state", "state", 14, right=False),
    Column("connections", "connections", "conns", 8),
    Column("cpu", "cpu_pct", "cpu %", 6),
    Column("spark", "", " conns 5 min", SPARK_CELLS, right=False),
    Column("accepts", "accepts_per_s", "acc/s", 7),
    Column("rejects", "rejects_per_s", "503/s", 7),
    Column("timeouts", "timeouts_per_s", "t/o/s", 6),
    Column("p99", "handshake_p99_ms", "p99 ms", 7),
)


def column_title(sort_key: str) -> str:
    """The column a sort key sorts, as its header reads ("acc/s", not accepts_per_s)."""
    return next((column.title.strip() for column in COLUMNS if column.key == sort_key), sort_key)


@lru_cache(maxsize=8)  # asked for every row drawn, of a few widths a session
def whole_columns(width: int) -> tuple[Column, ...]:
    """The columns that fit whole in `width` cells, from the left. A column cut at the table's edge misled:
    "503/s" cut to "50" read as a figure, and the sparkline cut to its oldest cells showed a drained node
    as full ("███"). The cells after the last whole column stay blank."""
    shown: list[Column] = []
    used = 0
    for column in COLUMNS:
        if used + column.width > width:
            break
        shown.append(column)
        used += column.width + 1
    return tuple(shown)


def _cell(text: str, column: Column) -> str:
    text = text[: column.width]
    return text.rjust(column.width) if column.right else text.ljust(column.width)


class NodeTable(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    NodeTable {
        height: 1fr;
        overflow-x: hidden;
        background: $surface;
    }
    NodeTable:focus {
        background-tint: $foreground 3%;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1)", "up", show=False),
        Binding("down,j", "cursor(1)", "down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
        Binding("home", "edge(0)", "first", show=False),
        Binding("end", "edge(1)", "last", show=False),
        # Off the footer, which is full at 160 columns; the help screen and the palette list it.
        Binding("enter", "open", "detail", show=False),
    ]

    class Opened(Message):
        """The operator asked for a node's detail."""

        def __init__(self, node_id: str) -> None:
            self.node_id = node_id
            super().__init__()

    class SortClicked(Message):
        def __init__(self, sort_key: str) -> None:
            self.sort_key = sort_key
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[NodeStatus] = []
        self._index: dict[str, int] = {}
        self.cursor_id: str | None = None
        self.query_state = NodeQuery()
        self.thresholds = GaugeThresholds()
        self.palette: Palette | None = None
        self._spark: Callable[[str], np.ndarray] = lambda node_id: np.empty(0)
        self._version = 0
        self._strips: LRUCache[tuple[object, ...], Strip] = LRUCache(512)
        self.alarming: set[str] = set()
        self.shedding: frozenset[str] = frozenset()
        self.stale = False

    # --- what the screen calls ---------------------------------------------------------------------

    def show(
        self,
        rows: list[NodeStatus],
        query: NodeQuery,
        spark: Callable[[str], np.ndarray],
        thresholds: GaugeThresholds,
        palette: Palette,
        alarming: set[str],
        stale: bool = False,
        shedding: frozenset[str] = frozenset(),
    ) -> None:
        """`stale`: the rows are the last frame's, too old to judge (`FleetModel.stale_s`): drawn dimmed and
        with no levels, as the gauges are. `shedding`: the nodes whose admission limits something, their
        503s warn at most (`shedding_nodes`)."""
        self.stale = stale
        self.rows = rows
        self._index = {node.id: i for i, node in enumerate(rows)}
        self.query_state = query
        self._spark = spark
        self.thresholds = thresholds
        self.palette = palette
        self.alarming = alarming
        self.shedding = shedding
        self._version += 1
        if self.cursor_id not in self._index:
            self.cursor_id = rows[0].id if rows else None
        self.virtual_size = Size(sum(c.width + 1 for c in COLUMNS), len(rows) + 1)
        self._scroll_cursor_into_view()
        self.refresh()

    @property
    def cursor_index(self) -> int:
        return self._index.get(self.cursor_id, 0) if self.cursor_id else 0

    # --- actions -------------------------------------------------------------------------------------

    def _move_to(self, index: int) -> None:
        if not self.rows:
            return
        index = max(0, min(len(self.rows) - 1, index))
        self.cursor_id = self.rows[index].id
        self._scroll_cursor_into_view()
        self.refresh()

    def _scroll_cursor_into_view(self) -> None:
        visible = max(1, self.scrollable_content_region.height - 1)
        index = self.cursor_index
        top = int(self.scroll_y)
        if index < top:
            self.scroll_to(y=index, animate=False, immediate=True)
        elif index >= top + visible:
            self.scroll_to(y=index - visible + 1, animate=False, immediate=True)

    def action_cursor(self, step: int) -> None:
        self._move_to(self.cursor_index + step)

    def action_page(self, direction: int) -> None:
        self._move_to(self.cursor_index + direction * max(1, self.scrollable_content_region.height - 2))

    def action_edge(self, end: int) -> None:
        self._move_to(len(self.rows) - 1 if end else 0)

    def action_open(self) -> None:
        if self.cursor_id is not None:
            self.post_message(self.Opened(self.cursor_id))

    def on_click(self, event: events.Click) -> None:
        if event.y == 0:
            x = event.x
            for column in whole_columns(self.scrollable_content_region.width):
                if x < column.width + 1:
                    if column.key:
                        self.post_message(self.SortClicked(column.key))
                    return
                x -= column.width + 1
            return
        index = int(self.scroll_y) + event.y - 1
        if 0 <= index < len(self.rows):
            if self.rows[index].id == self.cursor_id and event.chain >= 2:
                self.action_open()
            self._move_to(index)

    # --- rendering -----------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:
            return self._header(width, base)
        index = int(self.scroll_y) + y - 1
        if index >= len(self.rows):
            return Strip.blank(width, base)
        node = self.rows[index]
        selected = node.id == self.cursor_id
        key = (node.id, self._version, width, selected, self.has_focus, id(self.palette))
        strip = self._strips.get(key)
        if strip is None:
            strip = self._row(node, width, base, selected)
            self._strips[key] = strip
        return strip

    def _header(self, width: int, base: Style) -> Strip:
        query = self.query_state
        style = base + Style(bold=True, underline=True)
        segments = []
        for column in whole_columns(width):
            title = column.title
            if column.key and column.key == query.sort_key:
                title = f"{title}{'▼' if query.descending else '▲'}"
            segments.append(Segment(_cell(title, column) + " ", style))
        return Strip(segments).adjust_cell_length(width, base)

    def _row(self, node: NodeStatus, width: int, base: Style, selected: bool) -> Strip:
        palette = self.palette
        t = self.thresholds
        if selected:
            base = base + Style(reverse=True) if self.has_focus else base + Style(underline=True)
        if self.stale:
            base = base + Style(dim=True)

        def level_style(level: Level) -> Style:
            return base + palette.level_style(Level.UNKNOWN if self.stale else level) if palette else base

        shedding = node.id in self.shedding
        level = Level.CRITICAL if node.id in self.alarming else node_level(node, t, shedding)
        level = Level.UNKNOWN if self.stale else level
        cells: dict[str, tuple[str, Style]] = {
            "node": (node.id, base),
            "state": (f"{LEVEL_GLYPHS[level]} {node.state.value}", level_style(level)),
            "connections": (f"{node.connections:,}", base),
            # One decimal, as frames carry it: whole, 79.6 and 80.4 both read "80", one yellow, one red.
            # ... and more where one place would put it on a line it is over (80.04 is not "80.0", red).
            "cpu": (
                max(
                    (beside_limit(node.cpu_pct, line, 1) for line in (t.cpu_warn_pct, t.cpu_crit_pct)),
                    key=len,
                ),
                level_style(node_cpu_level(node, t)),
            ),
            "spark": (
                spark_blocks(self._spark(node.id), SPARK_CELLS, min_span_share=SPARK_MIN_SPAN_SHARE),
                base + Style(color=palette.chart["line"]) if palette else base,
            ),
            "accepts": (f"{node.accepts_per_s:.0f}", base),
            "rejects": (
                f"{node.rejects_per_s:.0f}",
                level_style(rejects_level(node, t, shedding)),
            ),
            "timeouts": (f"{node.timeouts_per_s:.0f}", base),
            "p99": (
                handshake_p99_text(node),
                level_style(level_at_least(node.handshake_p99_ms, t.handshake_warn_ms, t.handshake_crit_ms)),
            ),
        }
        segments = [Segment(_cell(cells[c.name][0], c) + " ", cells[c.name][1]) for c in whole_columns(width)]
        return Strip(segments).adjust_cell_length(width, base)
