"""Stream messages from text to typed records — and a count of the ones that are not.

A malformed message is counted and described, never raised past the decoder: the console must keep
showing the fleet when one frame is bad (issue #3, "a link that survives").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field, TypeAdapter, ValidationError

from console.model.link import StreamMessage
from console.protocol import Event, Frame, Hello

_ADAPTER: TypeAdapter[StreamMessage] = TypeAdapter(
    Annotated[Hello | Frame | Event, Field(discriminator="type")]
)


class MalformedMessage(ValueError):
    """A stream message that does not parse or does not make sense; `reason` is short and human."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "message"
    return f"{where}: {first.get('msg', 'invalid')}"


def _check_frame(frame: Frame) -> None:
    """Reject values no fleet can have: they would poison every chart that follows."""
    totals = frame.totals
    numbers = [totals.attempts_per_s, totals.accepts_per_s, totals.rejects_per_s, totals.headroom_pct]
    if totals.drain_inflow_ratio is not None:
        numbers.append(totals.drain_inflow_ratio)
    for node in frame.nodes:
        numbers.extend((node.cpu_pct, node.attempts_per_s, node.accepts_per_s, node.rejects_per_s))
        numbers.extend((node.timeouts_per_s, node.handshake_p99_ms))
        if node.connections < 0:
            raise MalformedMessage(f"nodes[{node.id}].connections: negative")
    if not all(math.isfinite(value) for value in numbers):
        raise MalformedMessage("frame: a rate or share is not a finite number")
    if totals.connections < 0:
        raise MalformedMessage("totals.connections: negative")
    if frame.seq < 0:
        raise MalformedMessage("seq: negative")
    if not math.isfinite(frame.time_s):
        raise MalformedMessage("time_s: not a finite number")
    if any(count < 0 for count in frame.waves.attempts):
        raise MalformedMessage("waves.attempts: negative count")
    if frame.waves.bin_ms <= 0:
        raise MalformedMessage("waves.bin_ms: not positive")


def decode_message(raw: str | bytes) -> StreamMessage:
    """Parse one stream message; raise MalformedMessage with a short reason when it is not one."""
    try:
        message = _ADAPTER.validate_json(raw)
    except ValidationError as error:
        raise MalformedMessage(_first_error(error)) from None
    except (ValueError, TypeError) as error:  # undecodable bytes
        raise MalformedMessage(f"message: {error}") from None
    if isinstance(message, Frame):
        _check_frame(message)
    elif isinstance(message, Event) and not math.isfinite(message.time_s):
        raise MalformedMessage("event.time_s: not a finite number")
    return message


@dataclass
class DecodeCounts:
    """How many messages decoded, how many were malformed, and why the last bad one was."""

    decoded: int = 0
    malformed: int = 0
    last_reason: str | None = None


class StreamDecoder:
    """Decode messages one by one, counting the malformed ones instead of raising."""

    def __init__(self) -> None:
        self.counts = DecodeCounts()

    def feed(self, raw: str | bytes) -> StreamMessage | None:
        try:
            message = decode_message(raw)
        except MalformedMessage as error:
            self.counts.malformed += 1
            self.counts.last_reason = error.reason[:200]
            return None
        self.counts.decoded += 1
        return message
