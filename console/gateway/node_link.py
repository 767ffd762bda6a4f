"""A node link: the controller's follower of one node's admin stream.

It resumes with the same since + epoch as any stream client, reconnects with a backoff policy, and shows
a node whose stream has gone silent as `down` — never dropping it.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from collections.abc import Awaitable, Callable

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from console.gateway.fold import WaveSum
from console.gateway.nodes_file import NodeEntry
from console.policies import Backoff, make_policy
from console.protocol import AdmissionSettings, Frame, NodeState, NodeStatus

#: A node whose stream has been silent this long is shown `down` (frames come every second). One whose admin
#: port refuses connections is shown `down` at once: no process listens there.
DOWN_AFTER_S = 3.0


def down_status(node_id: str, last: NodeStatus | None) -> NodeStatus:
    """What the fleet shows for a node that stopped answering: its id, state down, nothing flowing."""
    return NodeStatus(
        id=node_id,
        state=NodeState.DOWN,
        connections=0,
        cpu_pct=0.0,
        attempts_per_s=0.0,
        accepts_per_s=0.0,
        rejects_per_s=0.0,
        timeouts_per_s=0.0,
        handshake_p99_ms=0.0,
        capacity_connections=last.capacity_connections if last else 0,
    )


#: How long a node's frames may still show the admission it ran before it answered a change: those it sent
#: before (one a second) may be on their way, and would show it back on its old settings for a second.
FRAMES_IN_FLIGHT_S = 3.0

#: Called with a node's first frame from a process the link has not seen (another stream epoch) before the
#: link takes it; what it returns, if not None, is the admission that process runs once called.
NewProcess = Callable[["NodeLink", Frame], Awaitable[AdmissionSettings | None]]


class NodeLink:
    """Follows one node's admin stream, resuming with since + epoch; remembers the newest frame.

    Nodes stamp their drains in Unix seconds; `clock_zero_unix_s` turns those into the fleet clock.
    `on_new_process` sees a new process's first frame before the fleet does (the controller gives it back
    the admission the operator set: a restarted node starts on its command-line settings).
    """

    def __init__(
        self, entry: NodeEntry, waves: WaveSum, rng: random.Random, clock_zero_unix_s: float = 0.0
    ) -> None:
        self.entry = entry
        self._clock_zero_unix_s = clock_zero_unix_s
        self.latest: NodeStatus | None = None
        self.epoch: str | None = None  # the node's stream epoch: a new one means a new node process
        self.admission: AdmissionSettings | None = None
        self.received_s = 0.0
        self.frame_time_s = 0.0  # the newest frame's instant, fleet clock: its figures were taken then
        self.refused = False  # the last connect was refused: the node's process is gone
        self.on_new_process: NewProcess | None = None
        self._answered: tuple[tuple, float] | None = None  # the settings a node answered it runs, until when
        self._waves = waves
        self._since: tuple[int, str] | None = None
        # The controller reconnects to its nodes with the same policies it asks of clients.
        self._backoff = Backoff(make_policy("full_jitter", {"base_ms": 250.0, "max_ms": 5000.0}), _rng=rng)

    def status(self, now_s: float) -> NodeStatus:
        if self.latest is None or self.refused or now_s - self.received_s > DOWN_AFTER_S:
            return down_status(self.entry.id, self.latest)
        return self.latest

    async def run(self) -> None:
        stream = self.entry.admin_url.replace("http://", "ws://", 1) + "/v1/node/stream"
        while True:
            url = stream if self._since is None else f"{stream}?since={self._since[0]}&epoch={self._since[1]}"
            try:
                async with connect(url, open_timeout=3, ping_interval=5, ping_timeout=5) as ws:
                    async for raw in ws:
                        await self._receive(json.loads(raw))
            except ConnectionRefusedError:
                # A killed node showed `ready` with its last figures for 3 s more, its clients counted
                # twice — there and on the nodes they had already moved to (found in the fault review).
                self.refused = True
            except (OSError, TimeoutError, InvalidHandshake, ConnectionClosed):
                pass
            await asyncio.sleep(self._backoff.next_delay_ms() / 1000)

    async def _receive(self, message: dict) -> None:
        if message.get("type") == "hello":
            self._backoff.reset()
            return
        frame = Frame.model_validate(message)
        if frame.epoch != self.epoch:
            self._answered = None  # what the process before answered says nothing of this one
            # Until the hook returns, the fleet still shows the process before (silent: down, restarting), so
            # neither a frame nor the rollout's "back" sees the new one on settings it is about to lose.
            given = await self.on_new_process(self, frame) if self.on_new_process is not None else None
            self._take(frame)
            if given is not None:
                self.ran(given)
            return
        self._take(frame)

    def ran(self, settings: AdmissionSettings) -> None:
        """The node answered that it runs `settings` now: shown at once, and not taken back by a frame it
        sent before (`FRAMES_IN_FLIGHT_S`)."""
        self.admission = settings
        self._answered = (settings.limits_key(), time.monotonic() + FRAMES_IN_FLIGHT_S)

    def _take(self, frame: Frame) -> None:
        self.refused = False
        self._since = (frame.seq, frame.epoch)
        self.epoch = frame.epoch
        self.latest = self._on_fleet_clock(frame.nodes[0])
        self.frame_time_s = frame.time_s - self._clock_zero_unix_s
        self._take_admission(frame.admission)
        self.received_s = time.monotonic()
        self._waves.add(frame.waves)

    def _take_admission(self, reported: AdmissionSettings | None) -> None:
        if self._answered is not None and reported is not None:
            key, until_s = self._answered
            if reported.limits_key() != key and time.monotonic() < until_s:
                return  # sent before the node took what it answered
            self._answered = None
        self.admission = reported

    def _on_fleet_clock(self, node: NodeStatus) -> NodeStatus:
        zero = self._clock_zero_unix_s
        if node.due_back is not None:
            # To the millisecond at or before, never after: a start moved later would count clients due
            # just before it as still away (`DueBack.away_at`).
            start_s = math.floor((node.due_back.start_s - zero) * 1000.0) / 1000.0
            node = node.model_copy(update={"due_back": node.due_back.model_copy(update={"start_s": start_s})})
        if node.drain is None:
            return node
        drain = node.drain.model_copy(
            update={
                "started_at_s": round(node.drain.started_at_s - zero, 3),
                "deadline_at_s": round(node.drain.deadline_at_s - zero, 3),
            }
        )
        return node.model_copy(update={"drain": drain})
