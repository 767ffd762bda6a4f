"""The headless recorder: follow a fleet API's stream and record it, across disconnects and restarts.

The stream (../shared/DESIGN.md, "The fleet API, v1"): WebSocket `GET /v1/stream` with a bearer token; a
`hello`, then `event`s and `frame`s; resume with `?since=SEQ&epoch=E`. Each message is recorded verbatim.

`StreamRecorder` decides what to write (pure apart from the writer it is given): it skips what it already
holds when a resume replays it, and remembers where to resume from. `record_stream` is the loop around it:
connect, receive, and on any failure back off with full jitter and resume — a recorder must not be one more
client reconnecting in lockstep (interview seed: exponential backoff with full jitter). Restarted on the same
file, it resumes the stream from the last frame in the file.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

from pydantic import ValidationError
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus, WebSocketException

from console import __version__
from console.alarms import AlarmEngine
from console.errors import StormdeckError
from console.policies import Backoff, FullJitter
from console.protocol import Event, Frame, Hello
from console.record.records import RecordingHeader
from console.record.writer import RecordingWriter, Retention

log = logging.getLogger(__name__)

#: 0.5 s base, 30 s cap, full jitter: the same shape the console's own stream client uses.
RECORDER_BACKOFF = FullJitter(base_ms=500.0, multiplier=2.0, max_ms=30_000.0)
#: A 2000-node frame is ~0.5 MB of JSON; leave room for larger fleets.
MAX_MESSAGE_BYTES = 32 * 1024 * 1024


class StreamRefused(StormdeckError):
    """401/403: the token is wrong for this fleet; retrying with it cannot help."""

    exit_code = 2


def stream_url(base_url: str, since: int | None = None, epoch: str | None = None) -> str:
    """http(s)://host:port[/prefix] → ws(s)://host:port[/prefix]/v1/stream[?since=&epoch=]."""
    parts = urlsplit(base_url if "://" in base_url else f"http://{base_url}")
    scheme = {"https": "wss", "wss": "wss"}.get(parts.scheme, "ws")
    path = parts.path.rstrip("/")
    if not path.endswith("/v1/stream"):
        path += "/v1/stream"
    query = urlencode({"since": since, "epoch": epoch}) if since is not None and epoch is not None else ""
    return urlunsplit((scheme, parts.netloc, path, query, ""))


@dataclass
class StreamRecorder:
    """Stream messages in, records out; the writer opens at the first hello unless the file exists."""

    out: Path
    url: str | None = None
    retention: Retention = field(default_factory=Retention)
    fsync: bool = True
    wall_clock: Callable[[], float] = time.time
    writer: RecordingWriter | None = None
    frames_written: int = 0
    malformed: int = 0

    def __post_init__(self) -> None:
        if self.out.exists() and self.out.stat().st_size > 0:
            # The header passed is only used for a new file; an existing recording keeps its own.
            self.writer = self._open(self._header(None))

    @property
    def resume_from(self) -> tuple[int | None, str | None]:
        if self.writer is None:
            return None, None
        return self.writer.last_frame_seq, self.writer.last_epoch

    def receive(self, text: str | bytes) -> Hello | Frame | Event | None:
        """Record one stream message; return it parsed, or None when it was malformed."""
        try:
            kind = json.loads(text).get("type")
            message = {"hello": Hello, "frame": Frame, "event": Event}[kind].model_validate_json(text)
        except (ValueError, KeyError, AttributeError, ValidationError):
            self.malformed += 1  # recorded nowhere: a recording holds what the console could read
            return None
        if isinstance(message, Hello):
            if self.writer is None:
                self.writer = self._open(self._header(message))
            self.writer.write(message, raw=text)
        elif self.writer is not None and not self._already_held(message):
            self.writer.write(message, raw=text)
            if isinstance(message, Frame):
                self.frames_written += 1
        return message

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
        )

    def _open(self, header: RecordingHeader) -> RecordingWriter:
        return RecordingWriter(
            self.out,
            header,
            retention=self.retention,
            alarms=AlarmEngine(),
            fsync=self.fsync,
            wall_clock=self.wall_clock,
        )

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def record_stream(
    recorder: StreamRecorder,
    base_url: str,
    token: str,
    *,
    max_frames: int | None = None,
    rng: random.Random | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> int:
    """Record until cancelled, or until `max_frames` frames are written; return the frames written."""
    backoff = Backoff(RECORDER_BACKOFF, _rng=rng or random.Random())
    while max_frames is None or recorder.frames_written < max_frames:
        since, epoch = recorder.resume_from
        headers = {"Authorization": f"Bearer {token}"}
        try:
            async with connect(
                stream_url(base_url, since, epoch),
                additional_headers=headers,
                max_size=MAX_MESSAGE_BYTES,
                # Unbounded: each message is written as it arrives, so the queue stays short while recording;
                # a bounded one stalls the close after --frames N (the close frame waits behind it, 10 s).
                max_queue=None,
            ) as websocket:
                log.info("recording %s (resume from seq %s, epoch %s)", base_url, since, epoch)
                async for text in websocket:
                    if isinstance(recorder.receive(text), Hello):
                        backoff.reset()
                    if max_frames is not None and recorder.frames_written >= max_frames:
                        return recorder.frames_written
                reason = f"closed by the server ({websocket.close_code})"
        except InvalidStatus as error:
            status = error.response.status_code
            if status in (401, 403):
                raise StreamRefused(
                    f"{base_url} refused the stream (HTTP {status}): check the token"
                ) from None
            reason = f"HTTP {status}"
        except (OSError, WebSocketException, TimeoutError) as error:
            reason = f"{type(error).__name__}: {error}"[:160]
        delay_s = backoff.next_delay_ms() / 1000.0
        log.warning("stream lost (%s); reconnecting in %.1f s", reason, delay_s)
        await sleep(delay_s)
    return recorder.frames_written
