"""The server's bounded history of published frames: stream resume and per-node history. Pure.

Each entry is one frame interval: its events, then its frame, all stamped with the frame's `seq`, and the
same messages already serialized, so a replay or a fan-out to fifty clients serializes nothing again. The
newest entry is kept whole; older ones keep their nodes as columns (`node_columns`) and, past the replay
cap, no messages — ten minutes of a 480-node fleet held ~460 MB as records, ~60 MB so.
A client that holds frame N (and so every event tagged N, which came before it) resumes with
`?since=N&epoch=E`: when E is this history's epoch and frame N+1 is still replayable, every missed message
follows (`recovered: true`); otherwise the client starts fresh (`recovered: false`) — the resume contract
the seeds recommend for gateways (Centrifugo's `recover`/`epoch`, field guide).
"""

from __future__ import annotations

import secrets
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from console.protocol import Event, Frame, NodeSample, NodeStatus
from console.server.node_columns import NodeColumns

#: Ten minutes at one frame a second: the console's longest chart (connections over 10 min) and the
#: node detail's history.
DEFAULT_HISTORY_FRAMES = 600
#: A resume replays at most this many frames: DESIGN.md's resume replay cap (300 messages, after
#: Centrifugo's default, field guide). Further behind, a fresh start is cheaper than a replay.
DEFAULT_REPLAY_CAP_FRAMES = 300


@dataclass(frozen=True)
class Published:
    seq: int
    frame: Frame
    events: tuple[Event, ...]
    messages: tuple[str, ...]  # the events then the frame, as sent
    nodes: NodeColumns | None  # the frame's nodes as the history keeps them (None: a node has unknown fields)


@dataclass(frozen=True)
class Resume:
    recovered: bool
    messages: list[str]  # what follows the hello


def new_epoch() -> str:
    return secrets.token_hex(8)


def prepare(
    frame: Frame, events: list[Event], seq: int, epoch: str, published_unix_s: float | None = None
) -> Published:
    """Stamp a tick's frame and events with `seq` and `epoch`, and serialize them once for every client;
    the nodes' columns are made here too (a worker thread: ~3 ms for 2000 nodes, off the event loop)."""
    stamped_events = tuple(event.model_copy(update={"seq": seq, "epoch": epoch}) for event in events)
    stamped_frame = frame.model_copy(
        update={"seq": seq, "epoch": epoch, "published_unix_s": published_unix_s}
    )
    messages = (*(event.model_dump_json() for event in stamped_events), stamped_frame.model_dump_json())
    nodes = NodeColumns.of(stamped_frame.nodes)
    return Published(seq=seq, frame=stamped_frame, events=stamped_events, messages=messages, nodes=nodes)


@dataclass(frozen=True)
class _Kept:
    """A frame interval as the history keeps it: what resume, node history and node events read. Its
    messages are dropped once it is past the replay cap (no resume sends it again)."""

    seq: int
    time_s: float
    events: tuple[Event, ...]
    messages: tuple[str, ...]
    nodes: NodeColumns | tuple[NodeStatus, ...]


class FrameHistory:
    def __init__(
        self,
        max_frames: int = DEFAULT_HISTORY_FRAMES,
        replay_cap_frames: int = DEFAULT_REPLAY_CAP_FRAMES,
        epoch: str | None = None,
    ) -> None:
        if max_frames < 1 or replay_cap_frames < 1:
            raise ValueError("max_frames and replay_cap_frames must be at least 1")
        self.epoch = epoch or new_epoch()
        self.replay_cap_frames = min(replay_cap_frames, max_frames)
        self._entries: deque[_Kept] = deque(maxlen=max_frames)
        self._newest: Published | None = None  # whole: the frame a paused stream repeats, the nodes now
        self._positions: dict[str, int] = {}  # node id → index in the newest frame's nodes[]

    @property
    def newest_seq(self) -> int:
        """The newest frame's seq, or 0 before the first frame."""
        return self._entries[-1].seq if self._entries else 0

    @property
    def oldest_seq(self) -> int:
        return self._entries[0].seq if self._entries else 0

    @property
    def newest(self) -> Published | None:
        return self._newest

    def __len__(self) -> int:
        return len(self._entries)

    def stamp(self, frame: Frame, events: list[Event]) -> Published:
        """Give a tick the next seq and this epoch, serialize it, and keep it."""
        entry = prepare(frame, events, self.newest_seq + 1, self.epoch)
        self.keep(entry)
        return entry

    def keep(self, entry: Published) -> None:
        """Keep an entry made by `prepare` (which may run in a worker thread: serializing is the cost)."""
        if entry.seq != self.newest_seq + 1 or entry.frame.epoch != self.epoch:
            raise ValueError(f"entry {entry.seq} ({entry.frame.epoch}) does not follow {self.newest_seq}")
        before = self._entries[-1].nodes if self._entries else None
        nodes: NodeColumns | tuple[NodeStatus, ...] = tuple(entry.frame.nodes)
        if entry.nodes is not None:
            nodes = entry.nodes.sharing(before if isinstance(before, NodeColumns) else None)
        self._entries.append(_Kept(entry.seq, entry.frame.time_s, entry.events, entry.messages, nodes))
        self._newest = entry
        self._positions = {node.id: index for index, node in enumerate(entry.frame.nodes)}
        past_cap = len(self._entries) - self.replay_cap_frames - 1
        if past_cap >= 0 and self._entries[past_cap].messages:
            self._entries[past_cap] = replace(self._entries[past_cap], messages=())

    def resume(self, since: int | None, epoch: str | None) -> Resume:
        """What a client connecting with `?since=&epoch=` gets after its hello."""
        newest = self.newest
        if since is None and epoch is None:
            return Resume(recovered=False, messages=[newest.messages[-1]] if newest else [])
        oldest_replayable = max(self.oldest_seq, self.newest_seq - self.replay_cap_frames + 1)
        can_recover = (
            epoch == self.epoch
            and since is not None
            and since <= self.newest_seq
            and since >= oldest_replayable - 1
        )
        if not can_recover:
            # A fresh start: the newest frame at once, so the client paints without waiting a second.
            return Resume(recovered=False, messages=[newest.messages[-1]] if newest else [])
        missed = [
            message for entry in self._entries if entry.seq > (since or 0) for message in entry.messages
        ]
        return Resume(recovered=True, messages=missed)

    def node_history(self, node_id: str, limit: int) -> list[NodeSample]:
        """The node's status in each of the last `limit` frames that hold it, oldest first."""
        position = self._positions.get(node_id)
        samples: list[NodeSample] = []
        for entry in reversed(self._entries):
            if len(samples) >= limit:
                break
            fields = _node_fields(entry.nodes, node_id, position)
            if fields is not None:
                samples.append(NodeSample(**fields, seq=entry.seq, time_s=entry.time_s))
        samples.reverse()
        return samples

    def node_events(self, node_id: str, limit: int) -> list[Event]:
        found: list[Event] = []
        for entry in reversed(self._entries):
            for event in reversed(entry.events):
                if event.names(node_id):
                    found.append(event)
                    if len(found) >= limit:
                        return found[::-1]
        return found[::-1]

    def current_node(self, node_id: str) -> NodeStatus | None:
        newest = self.newest
        if newest is None:
            return None
        return _find_node(newest.frame.nodes, node_id, self._positions.get(node_id))

    def node_ids(self) -> list[str]:
        return list(self._positions)


def _node_fields(
    nodes: NodeColumns | tuple[NodeStatus, ...], node_id: str, position: int | None
) -> dict[str, Any] | None:
    if isinstance(nodes, NodeColumns):
        index = nodes.index_of(node_id, position)
        return None if index is None else nodes.fields(index)
    status = _find_node(nodes, node_id, position)
    return None if status is None else status.model_dump()


def _find_node(nodes: Sequence[NodeStatus], node_id: str, position: int | None) -> NodeStatus | None:
    # Nodes keep their order from frame to frame, so the newest frame's position is nearly always right;
    # the scan is for a fleet whose membership changed (a node provisioned or removed).
    if position is not None and position < len(nodes) and nodes[position].id == node_id:
        return nodes[position]
    for node in nodes:
        if node.id == node_id:
            return node
    return None
