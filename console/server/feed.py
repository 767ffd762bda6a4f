"""The live feed: drives a backend once per frame interval and publishes what it produces.

It owns the pace (one frame per wall second, whatever the speed), `seq` and `epoch` (through the
history), the newest snapshot, the alarms (and the steady attempts the admission guard judges by, learned
over the same frames), and the fan-out. Nothing here blocks the event loop: the
backend's work and the serialization of each frame run in worker threads; reads are answered from what
the last tick left behind, so they never wait for a tick in progress.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any, Protocol

from console.alarms.tracking import SteadyAttempts
from console.guards.thresholds import Thresholds
from console.protocol import Alarm, ClockState, Event, FleetSnapshot, Frame, Waves
from console.server.backend import ActingBackend, FleetBackend, Tick, still_frame
from console.server.clock import FleetClock
from console.server.events import COALESCE_OVER, coalesce_events
from console.server.fanout import Broadcaster
from console.server.history import FrameHistory, Published, prepare

log = logging.getLogger(__name__)

#: Share of a frame interval the backend may spend advancing; the rest is for serializing and sending.
BACKEND_BUDGET_SHARE = 0.7


#: Cleared alarms a snapshot still lists (newest), after the active ones.
SNAPSHOT_CLEARED_ALARMS = 20


class AlarmWatch(Protocol):
    """What judges alarms over the published frames: `console.alarms.AlarmEngine` has this shape.

    `update` is fed every published frame (stamped with seq and epoch), in order, from one worker thread at
    a time; the alarm changes it returns go out on the stream as `event`s of that frame."""

    def update(self, frame: Frame) -> list[Event]: ...

    @property
    def active(self) -> list[Alarm]: ...

    @property
    def history(self) -> list[Alarm]: ...


def default_alarms() -> AlarmWatch:
    """The alarm engine with the thresholds of DESIGN.md: the same rules the console runs."""
    from console.alarms import AlarmEngine

    return AlarmEngine()


@dataclass(frozen=True)
class TickTiming:
    """How long the newest frame took, for `bench server` and the logs."""

    seq: int
    fleet_seconds: int
    backend_s: float
    serialize_s: float
    late_s: float  # how far after its due time the frame left


class FleetFeed:
    def __init__(
        self,
        backend: FleetBackend,
        *,
        frame_interval_s: float = 1.0,
        clock: FleetClock | None = None,
        history: FrameHistory | None = None,
        broadcaster: Broadcaster | None = None,
        alarms: AlarmWatch | None = None,
        coalesce_events_over: int | None = COALESCE_OVER,
        steady: SteadyAttempts | None = None,
    ) -> None:
        self.backend = backend
        self.coalesce_events_over = coalesce_events_over
        self.frame_interval_s = frame_interval_s
        # `is None`, not `or`: an empty history or broadcaster is falsy (both have a length).
        self.clock = FleetClock() if clock is None else clock
        self.history = FrameHistory() if history is None else history
        self.broadcaster = Broadcaster() if broadcaster is None else broadcaster
        self.alarms: AlarmWatch = default_alarms() if alarms is None else alarms
        #: The steady attempts learned over every judged frame, as a console's attempts gauge learns them
        #: over the same frames: what the admission guard judges a limit by (`ActionDesk.steady`).
        self.steady = SteadyAttempts.of(Thresholds()) if steady is None else steady
        self.timing: TickTiming | None = None
        self._snapshot: FleetSnapshot | None = None
        self._alarms: list[Alarm] = []
        self._snapshot_json: tuple[int, bytes] | None = None
        self._task: asyncio.Task[None] | None = None
        self._told: list[tuple[Event, float | None]] = []

    @property
    def epoch(self) -> str:
        return self.history.epoch

    def tell(
        self,
        kind: str,
        message: str,
        node: str | None = None,
        data: dict[str, Any] | None = None,
        time_s: float | None = None,
    ) -> None:
        """An event of the server's own (an operator's action): it goes out with the next frame, before it
        as a tick's events do, stamped `time_s` — the fleet time it happened at — or else that frame's.
        (Stamped with the next frame's, an action read up to a frame later than its effect: 10 s at ×10.)"""
        self._told.append((Event(time_s=0.0, kind=kind, node=node, message=message, data=data or {}), time_s))

    async def start(self) -> None:
        snapshot = await self.backend.start()
        self._snapshot = snapshot
        # Frame 1 is the fleet as started, so a client attaching at once paints at once.
        first = self._clock_said(frame_of(snapshot), self.clock.paused)
        entry, alarms = await asyncio.to_thread(self._judge_and_prepare, first, [], True)
        self._keep(entry, alarms, None)
        self._task = asyncio.create_task(self._run(), name="stormdeck-feed")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.backend.close()

    def snapshot(self) -> FleetSnapshot:
        """The fleet as of the newest frame (or as started, before the first)."""
        if self._snapshot is None:
            raise RuntimeError("the feed has not started")
        return self._snapshot.model_copy(
            update={"alarms": self._alarms, "seq": self.history.newest_seq, "epoch": self.epoch}
        )

    async def snapshot_json(self) -> bytes:
        """`snapshot()` serialized, once per frame: at 2000 nodes that is tens of milliseconds, so it runs
        in a worker thread and every reader of the same frame shares it."""
        seq = self.history.newest_seq
        cached = self._snapshot_json
        if cached is not None and cached[0] == seq:
            return cached[1]
        snapshot = self.snapshot()
        body = await asyncio.to_thread(snapshot.model_dump_json)
        self._snapshot_json = (snapshot.seq or 0, body.encode())
        return self._snapshot_json[1]

    def clock_state(self) -> ClockState:
        return ClockState(
            paused=self.clock.paused,
            speed=self.clock.speed,
            time_s=self.snapshot().time_s,
            effective_speed=self.clock.effective_speed,
        )

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        due_at = loop.time() + self.frame_interval_s
        failures = 0
        while True:
            await asyncio.sleep(max(0.0, due_at - loop.time()))  # pacing to the wall clock
            started = loop.time()
            try:
                await self._publish_next(late_s=started - due_at)
                failures = 0
            except Exception:  # a failing tick must not stop the stream for every client
                failures += 1
                if failures in (1, 10, 100) or failures % 1000 == 0:  # not a traceback every second
                    log.exception("tick failed (%d in a row); the stream goes on with the next", failures)
            due_at += self.frame_interval_s
            if due_at < loop.time():
                due_at = loop.time()  # fell behind: the next frame leaves now, without a burst to catch up

    def _clock_said(self, frame: Frame, paused: bool) -> Frame:
        """`frame` saying whether the fleet clock is paused (`Frame.clock_paused`), where it has a clock."""
        return frame.model_copy(update={"clock_paused": paused}) if self.backend.clock_control else frame

    async def _publish_next(self, late_s: float) -> Published:
        # As this frame's seconds were asked: a change during the tick is the next frame's to say.
        paused = self.clock.paused
        due = self.clock.due_seconds() if self.backend.clock_control else 1
        backend_started = time.perf_counter()
        tick: Tick | None = None
        if due == 0:
            newest = self.history.newest
            assert newest is not None  # frame 1 is kept by start()
            frame = still_frame(newest.frame)
            if isinstance(self.backend, ActingBackend):
                # An action applied while the clock stands still (a drain's state, a new admission) shows
                # at once: the fleet as it is now, on the last second's figures.
                self._snapshot = await self.backend.current_snapshot()
                now = self._snapshot
                frame = frame.model_copy(
                    update={
                        "nodes": now.nodes,
                        "rollout": now.rollout,
                        "admission": now.admission,
                        "admission_overrides": now.admission_overrides,
                    }
                )
            events: list[Event] = []
        else:
            budget_s = self.frame_interval_s * BACKEND_BUDGET_SHARE
            tick = await self.backend.tick(due, budget_s)
            frame, events = tick.frame, tick.events
            if self.coalesce_events_over is not None:
                events = coalesce_events(events, self.coalesce_events_over)
        frame = self._clock_said(frame, paused)
        if self._told:
            told, self._told = self._told, []
            stamped = (e.model_copy(update={"time_s": frame.time_s if t is None else t}) for e, t in told)
            events = [*events, *stamped]
        backend_s = time.perf_counter() - backend_started
        self.clock.record(tick.fleet_seconds if tick else 0)
        serialize_started = time.perf_counter()
        entry, alarms = await asyncio.to_thread(self._judge_and_prepare, frame, events, tick is not None)
        serialize_s = time.perf_counter() - serialize_started
        self._keep(entry, alarms, tick)
        self.timing = TickTiming(entry.seq, tick.fleet_seconds if tick else 0, backend_s, serialize_s, late_s)
        if late_s + backend_s + serialize_s > self.frame_interval_s / 2:
            log.warning(
                "frame %d slow: %.0f ms late, backend %.0f ms for %d fleet s, serializing %.0f ms",
                entry.seq,
                late_s * 1000,
                backend_s * 1000,
                self.timing.fleet_seconds,
                serialize_s * 1000,
            )
        return entry

    def _judge_and_prepare(
        self, frame: Frame, events: list[Event], judge: bool
    ) -> tuple[Published, list[Alarm] | None]:
        """Worker thread: the alarms' verdict on the frame (its changes join the frame's events) and what the
        steady attempts learn from it, then the stamped, serialized entry. A still frame (paused) is not judged again: nothing changed."""
        seq = self.history.newest_seq + 1
        alarms: list[Alarm] | None = None
        if judge:
            stamped = frame.model_copy(update={"seq": seq, "epoch": self.epoch})
            events = [*events, *self.alarms.update(stamped)]
            self.steady.observe(
                frame.time_s, frame.totals, max((n.cpu_pct for n in frame.nodes), default=0.0)
            )
            cleared = self.alarms.history[-SNAPSHOT_CLEARED_ALARMS:]
            # Copies: the engine updates its alarms in place on the next frame, while readers serialize.
            alarms = [alarm.model_copy() for alarm in (*self.alarms.active, *reversed(cleared))]
        return prepare(frame, events, seq, self.epoch, time.time()), alarms

    def _keep(self, entry: Published, alarms: list[Alarm] | None, tick: Tick | None) -> None:
        # No await from here to the publish: a client subscribing in between would miss or double a frame.
        self.history.keep(entry)
        if tick is not None:
            self._snapshot = tick.snapshot
        if alarms is not None:
            self._alarms = alarms
        self.broadcaster.publish(entry.seq, entry.messages)


def frame_of(snapshot: FleetSnapshot) -> Frame:
    """A frame showing a snapshot: no wave bins, a span of 0 s (seq and epoch are stamped later)."""
    return Frame(
        seq=0,
        epoch="",
        time_s=snapshot.time_s,
        nodes=snapshot.nodes,
        totals=snapshot.totals,
        waves=Waves(attempts=[]),
        rollout=snapshot.rollout,
        admission=snapshot.admission,
        admission_overrides=snapshot.admission_overrides,
        span_s=0.0,
        max_nodes=snapshot.max_nodes,
    )
