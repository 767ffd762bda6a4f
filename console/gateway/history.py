"""The channel stream and its replay buffer: in-process, or in Redis so it outlives a gateway restart.

Every message carries an `offset` (1, 2, 3, … within an epoch); the stream carries an `epoch`, which
changes whenever the history restarts. A client that reconnects with its last offset and the epoch gets
the missed tail replayed (`recovered: true`) if the buffer still holds it, else `recovered: false` and a
fresh start — Centrifugo's model, with its default cap of 300 messages (field guide). Keeping the buffer
outside the process is the seeds' lesson from KEP-1904: in-process history dies with the process, so a
restart turns every resume into a full resync.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from console.errors import StormdeckError

#: Centrifugo's default history size (field guide).
REPLAY_CAP = 300

log = logging.getLogger("stormdeck.gateway")
T = TypeVar("T")

#: The live feed's waits before it subscribes again after losing Redis: the first, doubling up to the last.
LIVE_RETRY_S = (0.25, 5.0)

#: How long a command (publish, replay, head, epoch) waits for Redis's answer, or for a connection to it,
#: before the node treats Redis as away. A hung Redis (SIGSTOP, a stalled host) keeps its connections open
#: and answers nothing: without a bound a client arriving then waited on a reply that may never come, while
#: the pool's connections filled with stuck calls. A healthy Redis answers these in milliseconds (a replay
#: is one LRANGE of at most 300 messages), so 3 s leaves a busy one room for its stalls, and a client
#: arriving during a hang still hears 1013 within seconds, as when Redis is away. Set explicitly: redis-py
#: before 8 has no default (pyproject allows 5 and up), and 8's is 5 s.
COMMAND_TIMEOUT_S = 3.0

#: The command connections a node keeps to Redis.
POOL_CONNECTIONS = 16

#: How often a node asks Redis whether it answers (`RedisHistory.check`), so its status says Redis is away
#: even while no client arrives and nothing is published — and says it answers again once it does.
CHECK_EVERY_S = 1.0

#: A live message as delivered to subscribers: (offset, the JSON text every client receives).
Live = Callable[[int, str], None]


def encode_message(offset: int, data_json: str) -> str:
    return f'{{"type":"message","offset":{offset},"data":{data_json}}}'


@dataclass(frozen=True)
class Replay:
    recovered: bool
    epoch: str
    head: int  # the newest offset the stream holds (0 when nothing was published)
    messages: list[tuple[int, str]]


def plan_replay(
    epoch: str, head: int, held: list[tuple[int, str]], since: int | None, since_epoch: str | None
) -> Replay:
    """Pure: what a resuming client gets, given what the buffer holds (oldest first)."""
    if since is None or since_epoch is None:
        return Replay(False, epoch, head, [])
    oldest = held[0][0] if held else head + 1
    if since_epoch != epoch or since > head or since < oldest - 1:
        return Replay(False, epoch, head, [])
    return Replay(True, epoch, head, [m for m in held if m[0] > since])


class InProcessHistory:
    """The default: a deque in this process. A restart draws a new epoch, so nobody recovers."""

    def __init__(self, channel: str, cap: int = REPLAY_CAP) -> None:
        self.channel = channel
        self.epoch = secrets.token_hex(4)
        self._head = 0
        self._held: deque[tuple[int, str]] = deque(maxlen=cap)
        self._subscribers: list[Live] = []

    #: A deque in this process always answers.
    unreachable: str | None = None

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def check(self) -> None:
        return None

    def subscribe(self, deliver: Live) -> None:
        self._subscribers.append(deliver)

    def on_new_epoch(self, watcher: Callable[[str], None]) -> None:
        return None  # this history lives and dies with the process: its epoch never changes under it

    async def publish(self, data: dict[str, Any]) -> int:
        self._head += 1
        text = encode_message(self._head, json.dumps(data, separators=(",", ":")))
        self._held.append((self._head, text))
        for deliver in self._subscribers:
            deliver(self._head, text)
        return self._head

    async def replay(self, since: int | None, since_epoch: str | None) -> Replay:
        return plan_replay(self.epoch, self._head, list(self._held), since, since_epoch)

    async def head(self) -> tuple[str, int]:
        return self.epoch, self._head


# Appends atomically: next offset, the message text, trim to the cap, publish to the nodes.
_PUBLISH_LUA = """
local offset = redis.call('INCR', KEYS[1])
local text = '{"type":"message","offset":' .. offset .. ',"data":' .. ARGV[1] .. '}'
redis.call('RPUSH', KEYS[2], text)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[2]), -1)
redis.call('PUBLISH', KEYS[3], text)
return offset
"""


class HistoryUnreachable(StormdeckError):
    """The Redis that `--history` names does not answer (exit 1, a transport error)."""

    def __init__(self, url: str, error: Exception) -> None:
        self.url, self.error = url, error
        super().__init__(f"--history: cannot reach Redis at {url}: {type(error).__name__}: {error}")


class RedisHistory:
    """History and fan-out through Redis: every node of a fleet sees one stream, one epoch, one offset
    sequence, so a client can resume on any node — and after any node restarts."""

    def __init__(self, url: str, channel: str, cap: int = REPLAY_CAP) -> None:
        import redis.asyncio as aioredis  # only needed with --history redis://

        self.url, self.channel = url, channel
        self._cap = cap
        # A small blocking pool: a storm of resumes queues for Redis instead of opening a socket each. The
        # commands queue on `_connections` first, so one that waited its turn can still share a probe's
        # answer (see `_command`) rather than take a connection to a hung Redis.
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=POOL_CONNECTIONS,
            timeout=10,
            decode_responses=True,
            socket_timeout=COMMAND_TIMEOUT_S,
            socket_connect_timeout=COMMAND_TIMEOUT_S,
        )
        self._redis = aioredis.Redis(connection_pool=pool)
        self._connections = asyncio.Semaphore(POOL_CONNECTIONS)
        # The live feed's subscription has a connection of its own, with no read timeout: it is idle between
        # messages by design, so a timeout would end it every quiet moment. A hung Redis needs no detecting
        # there: it publishes nothing while hung, and the same subscription delivers again once it answers
        # (a Redis killed or restarted closes the connection, which the feed already follows).
        self._live_redis = aioredis.Redis.from_url(
            url, decode_responses=True, socket_timeout=None, socket_connect_timeout=COMMAND_TIMEOUT_S
        )
        self._keys = [f"stormdeck:{channel}:{k}" for k in ("offset", "history", "live", "epoch")]
        self._subscribers: list[Live] = []
        self._epoch_watchers: list[Callable[[str], None]] = []
        self._reader: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self._delivered_live = 0  # the newest offset handed to the subscribers
        # Why the live feed lost Redis, until it has subscribed again and caught up from the history.
        self._lost: str | None = None
        self._unreachable: HistoryUnreachable | None = None  # the last command's failure, until one answers
        # While Redis is unreachable: the one command finding out whether it answers again (True, False, or
        # None when that command was cancelled), which the commands arriving meanwhile wait for.
        self._probe: asyncio.Future[bool | None] | None = None
        self.epoch = ""

    async def start(self) -> None:
        # The epoch lives beside the history: whoever creates the history first names it.
        try:
            self.epoch = await self._claim_epoch()
        except HistoryUnreachable:
            # The first call to Redis: nothing answering ended `gateway serve` and `gateway publish` in a
            # traceback (found in review). A transport error, as `act`'s unreachable fleet: exit 1.
            await self._close_redis()
            raise
        self._reader = asyncio.create_task(self._read_live())
        await asyncio.wait_for(self._subscribed.wait(), timeout=5.0)

    async def _claim_epoch(self) -> str:
        async def claim() -> str:
            await self._redis.set(self._keys[3], secrets.token_hex(4), nx=True)
            return str(await self._redis.get(self._keys[3]))

        return await self._command(claim)

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        await self._close_redis()

    async def _close_redis(self) -> None:
        await self._redis.aclose()
        await self._live_redis.aclose()

    def subscribe(self, deliver: Live) -> None:
        self._subscribers.append(deliver)

    def on_new_epoch(self, watcher: Callable[[str], None]) -> None:
        """`watcher(epoch)` when the history restarts under a running node (a Redis that came back empty)."""
        self._epoch_watchers.append(watcher)

    async def _read_live(self) -> None:
        """Follow the channel for as long as the node runs. A Redis that goes away (a restart, a failover) is
        subscribed to again once it answers, and what was published meanwhile is delivered from the history
        first: the feed ended for good at the first lost connection, and the node went on `ready` with its
        clients connected and sent them nothing (found in the fault review)."""
        import redis.exceptions

        retry_s = LIVE_RETRY_S[0]
        while True:
            why = "the subscription ended"  # however it ends, what follows may have been missed
            try:
                await self._follow_live()
            except (redis.exceptions.RedisError, HistoryUnreachable, OSError) as error:
                # HistoryUnreachable comes from the catch-up's replay (Redis hung or went away just after
                # answering the subscribe): not caught here, it would end the node's live feed for good.
                why = str(error)
            if self._subscribed.is_set():  # one line when the feed is lost, not one a retry
                log.warning(
                    "live feed lost: Redis at %s: %s; subscribing again every ≤ %g s",
                    self.url,
                    why,
                    LIVE_RETRY_S[1],
                )
                self._subscribed.clear()
                self._lost, retry_s = f"live feed lost: {why}", LIVE_RETRY_S[0]
            await asyncio.sleep(retry_s)
            retry_s = min(LIVE_RETRY_S[1], retry_s * 2)

    async def _follow_live(self) -> None:
        """Subscribe; after a lost feed deliver what was missed; then live messages until the connection
        fails."""
        pubsub = self._live_redis.pubsub()
        try:
            await pubsub.subscribe(self._keys[2])
            if self._lost is not None:
                await self._catch_up()  # subscribed first, so nothing falls between the two
            self._subscribed.set()
            async for item in pubsub.listen():
                if item["type"] == "message":
                    text: str = item["data"]
                    self._deliver(_offset_of(text), text)
        finally:
            await pubsub.aclose()

    async def _catch_up(self) -> None:
        """What was published while the feed was lost, from the history, in order."""
        epoch = await self._claim_epoch()
        if epoch != self.epoch:  # Redis came back without the history (no persistence): a new stream
            log.warning("Redis at %s lost the channel's history: epoch %s → %s", self.url, self.epoch, epoch)
            self.epoch, self._delivered_live = epoch, 0
            for watcher in self._epoch_watchers:  # before the new stream's first message is delivered
                watcher(epoch)
        for offset, text in (await self.replay(self._delivered_live, self.epoch)).messages:
            self._deliver(offset, text)
        self._lost = None
        log.warning("live feed back: Redis at %s, from offset %d", self.url, self._delivered_live)

    def _deliver(self, offset: int, text: str) -> None:
        if offset <= self._delivered_live:
            return  # delivered from the history while catching up: not twice
        self._delivered_live = offset
        for deliver in self._subscribers:
            deliver(offset, text)

    async def publish(self, data: dict[str, Any]) -> int:
        keys = self._keys[:3]
        payload = json.dumps(data, separators=(",", ":"))
        return int(await self._command(lambda: self._redis.eval(_PUBLISH_LUA, 3, *keys, payload, self._cap)))

    async def replay(self, since: int | None, since_epoch: str | None) -> Replay:
        async def read() -> list[Any]:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.get(self._keys[3]).get(self._keys[0]).lrange(self._keys[1], 0, -1)
                return await pipe.execute()

        epoch, head, texts = await self._command(read)
        held = [(_offset_of(t), t) for t in texts]
        return plan_replay(epoch or self.epoch, int(head or 0), held, since, since_epoch)

    async def _twice(self, call: Callable[[], Awaitable[T]]) -> T:
        """`call()`, and once more if it failed: a pooled connection that a restarted Redis closed fails
        when next used, once (redis-py's own retry did not recover those: after a restart 8 of 10 arriving
        clients' replays failed, and publishes). A Redis that is away, or hung (no answer within
        `COMMAND_TIMEOUT_S`): `HistoryUnreachable`. A timed-out call is not tried again: the second would
        wait as long, and Redis may still run the first when it wakes (a publish would append twice)."""
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        try:
            return await call()
        except RedisConnectionError:
            pass
        except RedisTimeoutError as error:
            raise HistoryUnreachable(self.url, error) from None
        try:
            return await call()
        except (RedisConnectionError, RedisTimeoutError) as error:
            raise HistoryUnreachable(self.url, error) from None

    async def head(self) -> tuple[str, int]:
        return self.epoch, int(await self._command(lambda: self._redis.get(self._keys[0])) or 0)

    @property
    def unreachable(self) -> str | None:
        """Why Redis does not answer, while it does not (what the node's status reports): a command failed
        and none has answered since, or the live feed lost its subscription and has not caught up again.
        None while it answers."""
        if self._unreachable is not None:
            error = self._unreachable.error
            return f"Redis at {self.url}: {type(error).__name__}: {error}"
        if self._lost is not None:
            return f"Redis at {self.url}: {self._lost}"
        return None

    async def check(self) -> None:
        """Ask Redis whether it answers (one PING, as any command: a hung Redis counts as away after
        `COMMAND_TIMEOUT_S`, and while it is away this shares the one probing call's answer). Without it
        a node with no client arriving never noticed a hung Redis, and one that had noticed kept saying so
        after Redis answered again, until a client arrived."""
        with contextlib.suppress(HistoryUnreachable):
            await self._command(self._redis.ping)

    async def _command(self, call: Callable[[], Awaitable[T]]) -> T:
        """`call()` on one of the pool's connections (through `_twice`). Once Redis failed a command, the
        next do not each take a connection to wait `COMMAND_TIMEOUT_S` on a hung Redis: one at a time finds
        out whether it answers again, and those arriving meanwhile — or still waiting for a connection —
        share its answer. Each waiting on its own, the pool let 16 through every 3 s: 100 clients arriving
        during a hang waited up to 21 s for their 1013."""
        while True:
            if self._unreachable is not None and self._probe is not None:
                answered = await asyncio.shield(self._probe)  # one waiter leaving must not cancel it for all
                if answered is False and self._unreachable is not None:
                    raise HistoryUnreachable(self._unreachable.url, self._unreachable.error)
                continue  # it answered (or the probing call was cancelled): look again
            async with self._connections:
                if self._unreachable is not None and self._probe is not None:
                    continue  # Redis failed while this call waited for a connection: share the probe's answer
                return (
                    await self._probing(call) if self._unreachable is not None else await self._noting(call)
                )

    async def _probing(self, call: Callable[[], Awaitable[T]]) -> T:
        """`call()` as the one finding out whether an unreachable Redis answers again."""
        probe = self._probe = asyncio.get_running_loop().create_future()
        answered: bool | None = None
        try:
            result = await self._noting(call)
            answered = True
            return result
        except HistoryUnreachable:
            answered = False
            raise
        finally:
            probe.set_result(answered)
            self._probe = None

    async def _noting(self, call: Callable[[], Awaitable[T]]) -> T:
        """`call()`, noting whether Redis answered."""
        try:
            result = await self._twice(call)
        except HistoryUnreachable as error:
            self._unreachable = error
            raise
        self._unreachable = None
        return result


def _offset_of(text: str) -> int:
    return int(text[text.index('"offset":') + 9 : text.index(',"data"')])


def open_history(url: str | None, channel: str) -> InProcessHistory | RedisHistory:
    if url is None:
        return InProcessHistory(channel)
    return RedisHistory(url, channel)
