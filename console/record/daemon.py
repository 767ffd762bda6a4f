"""The headless recorder: follow a fleet API's stream and record it, across disconnects and restarts.

The stream (../shared/DESIGN.md, "The fleet API, v1"): WebSocket `GET /v1/stream` with a bearer token; a
`hello`, then `event`s and `frame`s; resume with `?since=SEQ&epoch=E`. The connection is the console's own
`StreamClient` (full-jitter reconnects, resume, the same decoding and checks); this module is its sink.

`StreamRecorder` decides what to write: it skips what it already holds when a resume replays it, and
remembers where to resume from, so a recorder restarted on the same file resumes the stream from the last
frame in the file. `record_stream` runs the client into it until stopped.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from console import __version__
from console.alarms import AlarmEngine
from console.client.stream import StreamClient, first_done
from console.errors import InputError, StormdeckError
from console.model.link import LinkState, LinkStatus, Malformed, Received, StreamItem
from console.model.units import counted, time_of_day
from console.protocol import Event, Frame, Hello
from console.record.lock import RecordingLock
from console.record.records import DrillInfo, RecordingHeader
from console.record.writer import RecordingWriter, Retention

log = logging.getLogger(__name__)


class StreamSource(Protocol):
    """What the console reads from (console.ui.app.StreamSource): the live client, a replay, a tap."""

    async def run(self, sink: Callable[[StreamItem], None]) -> None: ...


class StreamRefused(StormdeckError):
    """401/403: the token is wrong for this fleet; retrying with it cannot help. Exit 1, as `act` and
    `plan` exit for auth (README: 1 transport or auth); it exited 2, as if the command line were wrong."""

    exit_code = 1


class FleetNeverReached(StormdeckError):
    """The fleet API never answered within the recorder's wait (nothing listening, a wrong port): exit 1,
    a transport error, as `act` exits when nothing answers."""

    exit_code = 1


@dataclass
class StreamRecorder:
    """Stream messages in, records out; the writer opens at the first hello unless the file exists."""

    out: Path
    url: str | None = None
    retention: Retention = field(default_factory=Retention)
    fsync: bool = True
    wall_clock: Callable[[], float] = time.time
    max_frames: int | None = None
    writer: RecordingWriter | None = None
    frames_written: int = 0
    malformed: int = 0
    refused: str | None = None
    #: The file is another fleet's recording, or another drill's: nothing of this stream is written into it.
    wrong_fleet: InputError | None = None
    #: The option that named `out`, for a refusal of it.
    option: str = "--out"
    #: What a new file's header says the session was, when the recorder knows (`drill --record`): the
    #: report's Session section, and the sign that a recording came from a drill even if it ended unscored.
    scenario: str | None = None
    seed: int | None = None
    overrides: list[str] | None = None
    drill: DrillInfo | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    #: How long to wait for a fleet never reached, seconds from the first try; None: for ever (a console's
    #: recording follows the console). Once reached, a lost stream is followed however long it takes.
    wait_s: float | None = None
    #: Why the fleet was never reached, when the wait ran out.
    never_reached: str | None = None
    _first_try_at_s: float | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        # Held from the start, not from the first hello: two recorders started together would both write.
        self._lock: RecordingLock | None = RecordingLock(self.out, self.option)
        if self.out.exists() and self.out.stat().st_size > 0:
            # The header passed is only used for a new file; an existing recording keeps its own.
            self.writer = self._open(self._header(None))

    @property
    def resume_from(self) -> tuple[int | None, str | None]:
        if self.writer is None:
            return None, None
        return self.writer.last_frame_seq, self.writer.last_epoch

    def sink(self, item: StreamItem) -> None:
        """The stream client's sink: messages are recorded, link changes logged, bad messages counted."""
        if self.done.is_set():
            return  # the client may deliver what it already holds before it sees the cancel
        if isinstance(item, Received):
            self.receive(item.message)
        elif isinstance(item, Malformed):
            self.malformed += 1  # recorded nowhere: a recording holds what the console could read
        elif isinstance(item, LinkStatus):
            if self._first_try_at_s is None:
                self._first_try_at_s = item.at_s
            if item.state is LinkState.RECONNECTING and not item.reached:
                self._wait_for_the_fleet(item)
            elif item.state is LinkState.LIVE:
                seq, epoch = self.resume_from
                what = f"recording {self.url or 'the stream'} into {self.out}"
                if seq is None:
                    log.info("%s, from the stream's next frame on", what)
                else:
                    log.info("%s, continuing it after its last frame (seq %s, epoch %s)", what, seq, epoch)
            elif item.state is LinkState.RECONNECTING:
                log.warning("stream lost (%s); reconnecting in %.1f s", item.reason, item.next_in_s or 0.0)
            elif item.state is LinkState.REFUSED:
                self.refused = item.reason or "refused"
        if (
            self.refused is not None
            or self.never_reached is not None
            or (self.max_frames is not None and self.frames_written >= self.max_frames)
        ):
            self.done.set()

    def _wait_for_the_fleet(self, status: LinkStatus) -> None:
        """A first connect failed: say so in those words (it said "stream lost" of a stream never had),
        and give up once the next try would come after `wait_s` (a script's `record --frames 1` against
        a stopped server hung, retrying for ever)."""
        reason = status.reason or "no answer"
        next_try_s = status.at_s + (status.next_in_s or 0.0)
        if self.wait_s is not None and next_try_s - (self._first_try_at_s or status.at_s) > self.wait_s:
            self.never_reached = reason
            return
        log.warning(
            "waiting for the fleet API at %s (never reached: %s); next try in %.1f s",
            self.url or "its URL",
            reason,
            status.next_in_s or 0.0,
        )

    def receive(self, message: Hello | Frame | Event) -> None:
        """Record one stream message, unless a resume repeated it."""
        if isinstance(message, Hello):
            if self.writer is None:
                self.writer = self._open(self._header(message))
            elif self._another_session(message):
                self.done.set()
                return
            self.writer.write(message)
        elif self.writer is not None and not self._already_held(message):
            self.writer.write(message)
            if isinstance(message, Frame):
                self.frames_written += 1

    def _another_session(self, hello: Hello) -> bool:
        """Whether the file being continued is another fleet's recording (a name reused for the next
        incident): this stream's frames would go under its header, two fleets read as one. Or another
        drill's: the header, written once, gives the whole file its drill's clock, which this stream's
        frames do not run on (another drill, or a plain fleet, of the same fleet name)."""
        assert self.writer is not None
        held = self.writer.header
        where = f", recorded from {held.url}" if held.url else ""
        if held.fleet is not None and held.fleet != hello.fleet:
            allowed = (
                f"a new file, or a recording of fleet {hello.fleet!r} to continue ({self.out.name} holds "
                f"fleet {held.fleet!r}{where})"
            )
        elif not _same_drill(held.drill, hello):
            allowed = (
                f"a new file, or a recording of {_session(hello.fleet, served_drill_info(hello))} to "
                f"continue ({self.out.name} holds {_session(held.fleet, held.drill)}{where})"
            )
        else:
            return False  # a source that restarted is the same fleet: its recording goes on
        self.wrong_fleet = InputError(self.option, str(self.out), allowed)
        return True

    def _already_held(self, message: Frame | Event) -> bool:
        """A resume replays from `since`; anything at or before the last frame held is a repeat."""
        assert self.writer is not None
        last_seq, last_epoch = self.writer.last_frame_seq, self.writer.last_epoch
        if message.seq is None or last_seq is None or message.epoch != last_epoch:
            return False
        return message.seq <= last_seq

    def _header(self, hello: Hello | None) -> RecordingHeader:
        return RecordingHeader(
            stormdeck_version=__version__,
            fleet=hello.fleet if hello else None,
            source=hello.source if hello else None,
            url=self.url,
            started_unix_s=self.wall_clock(),
            # The recorder's own (`drill --record`), else the stream's hello's: `record URL` of `sim serve`.
            scenario=self.scenario if self.scenario is not None or hello is None else hello.scenario,
            seed=self.seed if self.seed is not None or hello is None else hello.seed,
            overrides=self.overrides if self.overrides is not None or hello is None else hello.overrides,
            drill=self.drill if self.drill is not None or hello is None else served_drill_info(hello),
        )

    def _open(self, header: RecordingHeader) -> RecordingWriter:
        lock, self._lock = self._lock, None  # the writer's now: it releases it on close
        return RecordingWriter(
            self.out,
            header,
            retention=self.retention,
            alarms=AlarmEngine(),
            fsync=self.fsync,
            wall_clock=self.wall_clock,
            field=self.option,
            lock=lock,
        )

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self._lock is not None:
            self._lock.release()


def served_drill_info(hello: Hello) -> DrillInfo | None:
    """What a header says of the served drill a stream's hello names (`drill NAME --serve`): so that a
    recording of it (`record`, `attach --record`) replays and reports on the drill's clock, as the attached
    console showed it. Only what the hello says: its speed is the instructor's to change, not said."""
    served = hello.drill
    if served is None:
        return None
    return DrillInfo(
        name=served.name,
        title=served.title,
        seed_source=served.seed_source or None,  # "" is the hello's "not said"
        clock_start_s=served.clock_start_s,
    )


def _same_drill(held: DrillInfo | None, hello: Hello) -> bool:
    """Whether a stream may go on under a header's drill. A header without one reads fleet time
    throughout, whatever the stream (a plain recording; one made before `record` read the hello's drill);
    one with a drill needs that drill, on the same clock when the header says it."""
    if held is None:
        return True
    served = hello.drill
    if served is None or served.name != held.name:
        return False
    return held.clock_start_s is None or held.clock_start_s == served.clock_start_s


def _session(fleet: str | None, drill: DrillInfo | None) -> str:
    if drill is None:
        return f"fleet {fleet!r} without a drill"
    clock = f" (its clock from {time_of_day(drill.clock_start_s)})" if drill.clock_start_s is not None else ""
    return f"drill {drill.name!r}{clock} of fleet {fleet!r}"


async def record_stream(
    recorder: StreamRecorder,
    base_url: str,
    token: str,
    *,
    rng: random.Random | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> int:
    """Record until cancelled, or until the recorder has its `max_frames`; return the frames written.

    Raises `StreamRefused` when the server refuses the token, `FleetNeverReached` when the recorder's
    `wait_s` ran out before the fleet API ever answered.
    """
    client = StreamClient(base_url, token, rng=rng, sleep=sleep)
    client.last_seq, client.epoch = recorder.resume_from
    following, _ = await first_done(client.run(recorder.sink), recorder.done.wait())
    if following.done() and not following.cancelled() and following.exception() is not None:
        raise following.exception()  # type: ignore[misc]
    if recorder.wrong_fleet is not None:
        raise recorder.wrong_fleet
    if recorder.never_reached is not None:
        waited = (
            f"gave up after {recorder.wait_s:g} s (--wait-s)"
            if recorder.wait_s
            else "tried once (--wait-s 0)"
        )
        raise FleetNeverReached(
            f"never reached {base_url}: {recorder.never_reached} — is the server running? (fleet up, sim "
            f"serve, controller; or check the URL's port) Nothing recorded; {waited}"
        )
    if recorder.refused is not None:
        # The reason says what to do (console.client.stream: check the token file, or ask for a viewer's).
        # A token revoked mid-session is refused at a reconnect, with frames already recorded.
        written = recorder.frames_written
        kept = f"{counted(written, 'frame')} recorded before it" if written else "nothing recorded"
        raise StreamRefused(f"{base_url} refused the stream ({recorder.refused}); {kept}")
    return recorder.frames_written


class RecordingTap:
    """A stream source that records what passes through it: `attach --record FILE`.

    Wraps the console's source (anything with `run(sink)`): every item goes to the recorder, then on to the
    console. The console's own actions and confirmations are written with `recorder.writer.write(...)`.
    """

    def __init__(self, source: StreamSource, recorder: StreamRecorder) -> None:
        self.source = source
        self.recorder = recorder
        # What the console asks of its source, passed through: the URL its link notices name (they said
        # "the fleet API" without it under --record).
        self.base_url: str | None = getattr(source, "base_url", None)

    def retry_now(self) -> None:
        """Ctrl+R under `attach --record`: the stream client's, which the tap hid (it answered "the link
        is not waiting to reconnect" while it was)."""
        retry = getattr(self.source, "retry_now", None)
        if retry is not None:
            retry()

    async def run(self, sink: Callable[[StreamItem], None]) -> None:
        def both(item: StreamItem) -> None:
            self.recorder.sink(item)
            sink(item)

        try:
            await self.source.run(both)
        finally:
            self.recorder.close()
