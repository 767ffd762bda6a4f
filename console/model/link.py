"""What the stream client tells the model: messages with their arrival time, link changes, bad messages."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from console.protocol import Event, Frame, Hello

StreamMessage = Hello | Frame | Event


#: Paused, wherever the console says it: a replay held (the header's "replay ⏸ paused" and the timeline
#: bar's, which drew "‖" under it), a drill's clock stopped by its instructor. One cell in tmux at 80×24.
PAUSED_GLYPH = "⏸"
#: Ended, wherever the console says it: a replay at the end of its recording (the header's "replay ⏹ end of
#: the recording" and the timeline bar's "replay ⏹ end", which drew "■" under it), a drill over.
ENDED_GLYPH = "⏹"


class LinkState(StrEnum):
    CONNECTING = "connecting"
    LIVE = "live"
    RECONNECTING = "reconnecting"
    REFUSED = "refused"  # 401/403: retrying with the same token cannot help
    STOPPED = "stopped"  # the stream client itself failed: a bug, shown instead of a frozen "live"
    PAUSED = "paused"  # a replay held or at its end: no frames, and none are late


@dataclass(frozen=True)
class LinkStatus:
    state: LinkState
    attempt: int = 0
    next_in_s: float | None = None
    reason: str | None = None
    at_s: float = 0.0  # wall clock of the change, so the header can count the wait down
    #: A replay's playback speed: the header then says "replay ▶ ×5" or "replay ⏸ paused", not a "live"
    #: link (a recording played back is not one). None for a stream.
    replay_speed: float | None = None
    #: Whether the stream client ever had a stream from this fleet. A first connect that fails is a fleet
    #: never reached (nothing listening, a wrong port), not a link lost: there is no last frame to keep.
    reached: bool = True

    @property
    def label(self) -> str:
        return "link" if self.replay_speed is None else "replay"

    def describe(self, now_s: float) -> str:
        if self.replay_speed is not None and self.state is LinkState.LIVE:
            return f"▶ ×{self.replay_speed:g}"
        if self.replay_speed is not None and self.state is LinkState.PAUSED:
            return (
                f"{PAUSED_GLYPH} paused"
                if self.reason in (None, "paused")
                else f"{ENDED_GLYPH} {self.reason}"
            )
        if self.state is LinkState.RECONNECTING:
            remaining = max(0.0, (self.next_in_s or 0.0) - (now_s - self.at_s))
            if not self.reached:
                return (
                    f"waiting for the fleet API (never reached: {self.reason or 'no answer'}; attempt "
                    f"{self.attempt}, next in {remaining:.1f} s)"
                )
            return f"reconnecting (attempt {self.attempt}, next in {remaining:.1f} s)"
        if self.state is LinkState.REFUSED:
            return f"refused: {self.reason or 'not authorised'}"
        if self.state is LinkState.STOPPED:
            return f"stopped: {self.reason or 'the stream client failed'}"
        if self.state is LinkState.PAUSED and self.reason:
            return self.reason
        return self.state.value


def lost_link_text(reason: str | None, url: str | None) -> str:
    """What the console says once when a stream it had (or was first trying) fails: the header then counts
    attempts down without a word of why — with `fleet up` stopped, "reconnecting (attempt 7 …)" for ever."""
    where = f" at {url}" if url else ""
    return (
        f"lost the fleet API{where}: {reason or 'the stream ended'}. The console retries on its own and keeps "
        "the last frame, marked stale; if the server was stopped (fleet up, serve, controller), start it "
        "again, then Ctrl+R tries at once."
    )


def never_reached_text(reason: str | None, url: str | None) -> str:
    """What the console says once when its first tries fail: `attach` to a port nothing listens on told
    "lost the fleet API … keeps the last frame, marked stale" of a fleet it had never reached."""
    where = f" {url}" if url else " the fleet API"
    return (
        f"never reached{where}: {reason or 'no answer'} — is the server running? (fleet up, sim serve, "
        "controller; or check the URL's port.) The console keeps trying on its own; Ctrl+R tries at once."
    )


@dataclass(frozen=True)
class Received:
    message: StreamMessage
    at_s: float  # wall clock on arrival: staleness is measured from it


@dataclass(frozen=True)
class Malformed:
    reason: str
    at_s: float


StreamItem = Received | LinkStatus | Malformed
