"""A `gateway serve` process hung (SIGSTOP … SIGCONT) and resumed: its paced closes do not come in a burst.

The clients are real sockets in this process (which is not stopped), so their receipt times are what a
fleet would see at resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from console.gateway.processes import NodeProcess
from tests.gateway.conftest import CHEAP_SIGNER, CHEAP_WORK_FACTOR, TOKEN, wait_for

pytestmark = pytest.mark.timeout(60)

CHEAP = ("--work-factor", str(CHEAP_WORK_FACTOR))


@dataclass
class Hints:
    """When each client was told to reconnect (monotonic, this process), and why; the clients' sockets."""

    times_s: list[float] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    sockets: list[ClientConnection] = field(default_factory=list)

    def between(self, from_s: float, to_s: float) -> int:
        return sum(from_s <= t <= to_s for t in self.times_s)


async def _listen(ws: ClientConnection, hints: Hints) -> None:
    with contextlib.suppress(ConnectionClosed):
        async for text in ws:
            message = json.loads(text)
            if message.get("type") == "reconnect":
                hints.times_s.append(time.monotonic())
                hints.reasons.append(message["reason"])


@contextlib.asynccontextmanager
async def clients_of(node: NodeProcess, count: int) -> AsyncIterator[Hints]:
    """`count` clients connected to `node`, each noting its reconnect hint; they do not come back."""
    hints = Hints()
    token = CHEAP_SIGNER.mint("stalled", time.time() + 120)
    sockets = [await connect(f"{node.url}?token={token}", ping_interval=None) for _ in range(count)]
    for ws in sockets:
        assert json.loads(await ws.recv())["type"] == "hello"
    hints.sockets = sockets
    listeners = [asyncio.create_task(_listen(ws, hints)) for ws in sockets]
    try:
        yield hints
    finally:
        for ws in sockets:
            await ws.close()
        await asyncio.gather(*listeners, return_exceptions=True)


def _drain(node: NodeProcess, rate_per_s: float, deadline_s: float) -> None:
    body = {"rate_per_s": rate_per_s, "deadline_s": deadline_s, "hint_ms": [0, 100]}
    answer = httpx.post(
        f"{node.admin_url}/v1/node/drain", json=body, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert answer.status_code == 200, answer.text


async def _hang(node: NodeProcess, stall_s: float) -> float:
    """Stop the node's process for `stall_s` (the hang under test, not a wait); returns when it resumed."""
    assert node.process is not None
    node.process.send_signal(signal.SIGSTOP)
    try:
        await asyncio.sleep(stall_s)
    finally:
        node.process.send_signal(signal.SIGCONT)
    return time.monotonic()


async def test_a_drain_resumed_after_a_hang_closes_at_its_rate_not_in_a_burst(node_processes) -> None:
    """A 3 s hang of a node draining at 10/s: at resume it closed the ~30 connections that fell due
    meanwhile in one burst. The stall's time is lost: at most its rate (plus the one due) in the second
    after resume, and the drain goes on at its rate."""
    node = node_processes("a", *CHEAP)
    async with clients_of(node, 60) as hints:
        _drain(node, rate_per_s=10, deadline_s=60)
        await wait_for(lambda: len(hints.times_s) >= 3, 5, "the drain's first closes")
        resumed_s = await _hang(node, 3.0)
        await wait_for(lambda: hints.between(resumed_s, resumed_s + 3) >= 12, 10, "the drain going on")
        first_second = hints.between(resumed_s, resumed_s + 1.0)
        assert first_second <= 10 + 3, f"{first_second} closes in the second after resume at 10/s"
        assert set(hints.reasons) == {"drain"}
        drain = node.status()["drain"]
        assert drain["remaining"] + drain["closed"] == 60 and drain["closed"] >= len(hints.times_s)


async def test_a_deadline_that_passed_during_a_hang_force_closes_the_rest_at_resume(node_processes) -> None:
    """The deadline is the clock's, not the node's running time: reached while the node was stopped, it
    force-closes what is left as soon as the node runs again."""
    node = node_processes("a", *CHEAP)
    async with clients_of(node, 20) as hints:
        _drain(node, rate_per_s=1, deadline_s=1.5)
        await wait_for(lambda: len(hints.times_s) >= 1, 5, "the drain's first close")
        resumed_s = await _hang(node, 3.0)
        await wait_for(lambda: len(hints.times_s) == 20, 5, "every client closed")
        assert hints.between(resumed_s, resumed_s + 1.0) >= 17
        assert hints.reasons.count("drain_deadline") >= 17
        assert node.status()["drain"]["remaining"] == 0


async def test_the_achieved_rate_counts_the_paced_closes_not_those_forced_at_the_deadline(
    node_processes,
) -> None:
    """(No hang here: the deadline's force-close beside the paced ones.) A 2/s drain with a 1.5 s deadline
    over 20 clients read an achieved rate of ~12/s: the 16 closes forced at one moment counted as paced."""
    node = node_processes("a", *CHEAP)
    async with clients_of(node, 20) as hints:
        _drain(node, rate_per_s=2, deadline_s=1.5)
        await wait_for(lambda: len(hints.times_s) == 20, 5, "every client closed")
        drain = node.status()["drain"]
        paced = hints.reasons.count("drain")
        assert drain["closed"] == 20 and drain["remaining"] == 0
        assert drain["forced"] == hints.reasons.count("drain_deadline") == 20 - paced
        assert 2 <= paced <= 5, hints.reasons
        assert drain["achieved_rate_per_s"] == pytest.approx(2.0, rel=0.25)


async def test_lifetimes_that_end_during_a_hang_do_not_all_end_at_resume(node_processes) -> None:
    """Lifetimes dithered over 10 s, a 4 s hang: the ~24 connections whose lifetime ended meanwhile were
    all told to reconnect in the same loop turn at resume, undoing the dither. A lifetime counts the time
    the node ran: at resume they end as spread out as they were scheduled (~6 a second here)."""
    life = ("--lifetime-s", "11", "--lifetime-dither-s", "10", "--close-grace-s", "0", "--seed", "5")
    node = node_processes("a", *CHEAP, *life)
    async with clients_of(node, 60) as hints:
        await wait_for(lambda: len(hints.times_s) >= 3, 10, "the first lifetimes ending")
        resumed_s = await _hang(node, 4.0)
        await wait_for(lambda: hints.between(resumed_s + 1.0, resumed_s + 60) >= 1, 15, "lifetimes going on")
        first_second = hints.between(resumed_s, resumed_s + 1.0)
        # Not all at once, and not held back by a second stall either: on at their scheduled pace.
        assert 1 <= first_second <= 15, f"{first_second} lifetimes ended in the second after resume"
        assert set(hints.reasons) == {"lifetime"}


def _metric(node: NodeProcess, name: str) -> float:
    text = httpx.get(f"{node.admin_url}/metrics").text
    return float(next(line.split()[-1] for line in text.splitlines() if line.startswith(f"{name}{{")))


async def test_a_hang_does_not_drop_clients_whose_pongs_came_in_time(node_processes) -> None:
    """Pinged every 1 s, 40 clients answer a ping up to 0.3 s late (their reading paused), the node hangs just
    after their pongs are sent, for 2 s: the pongs came within the timeout and wait in the node's own
    buffers. Under websockets' keepalive the node dropped every one of them at resume (the timeouts had
    passed on the clock); now they stay. A 41st client that never answers is still dropped."""
    node = node_processes("a", *CHEAP, "--ping-interval-s", "1")
    async with clients_of(node, 41) as hints:
        clients = hints.sockets
        for ws in clients:
            ws.transport.pause_reading()  # the node's pings wait unread: no pong yet
        await asyncio.sleep(1.3)  # the node's first keepalive pings go out 1 s after each connect
        assert node.process is not None
        node.process.send_signal(signal.SIGSTOP)
        try:
            for ws in clients[:40]:
                ws.transport.resume_reading()  # the pongs go out now, within the node's 1 s timeout
            await asyncio.sleep(2.0)  # the hang under test
        finally:
            node.process.send_signal(signal.SIGCONT)
        await wait_for(
            lambda: _metric(node, "stormdeck_gateway_drops_total") >= 1, 10, "the silent client dropped"
        )
        assert _metric(node, "stormdeck_gateway_drops_total") == 1
        assert node.status()["connections"] == 40
        clients[40].transport.resume_reading()  # so that closing it here does not wait for its timeout


async def test_a_hang_is_one_frame_of_the_admin_stream_not_one_per_missed_second(node_processes) -> None:
    """The 1 s frame ticker made up a 3 s hang at resume: 3–4 frames at once, each rolling the node's meter
    over microseconds (CPU read ~100 %). Now one frame covers the hang and the next comes a second later."""
    node = node_processes("a", *CHEAP)
    arrivals_s: list[float] = []
    async with connect(node.admin_url.replace("http://", "ws://") + "/v1/node/stream") as stream:

        async def follow() -> None:
            async for text in stream:
                if "nodes" in json.loads(text):
                    arrivals_s.append(time.monotonic())

        following = asyncio.create_task(follow())
        try:
            await wait_for(lambda: len(arrivals_s) >= 1, 5, "the first frame")
            resumed_s = await _hang(node, 3.0)
            await wait_for(lambda: sum(t >= resumed_s for t in arrivals_s) >= 2, 5, "two frames after resume")
        finally:
            following.cancel()
    after = [t for t in arrivals_s if t >= resumed_s]
    assert sum(t <= resumed_s + 0.5 for t in after) == 1, [round(t - resumed_s, 3) for t in after]
    assert after[1] - after[0] >= 0.5


async def test_a_publisher_resumed_after_a_hang_does_not_make_up_the_missed_messages(node_processes) -> None:
    """A node publishing 10 messages a second, hung 3 s: at resume it published the ~30 it had missed at
    once, to every client. Now it goes on at its rate from the resume."""
    node = node_processes("a", *CHEAP, "--publish-rate-per-s", "10")
    token = CHEAP_SIGNER.mint("reader", time.time() + 60)
    arrivals_s: list[float] = []
    async with connect(f"{node.url}?token={token}", ping_interval=None) as ws:

        async def read() -> None:
            async for text in ws:
                if json.loads(text).get("type") == "message":
                    arrivals_s.append(time.monotonic())

        reading = asyncio.create_task(read())
        try:
            await wait_for(lambda: len(arrivals_s) >= 3, 5, "the first messages")
            resumed_s = await _hang(node, 3.0)
            await wait_for(lambda: any(t > resumed_s + 1.0 for t in arrivals_s), 5, "a second of messages")
        finally:
            reading.cancel()
    first_second = sum(resumed_s <= t <= resumed_s + 1.0 for t in arrivals_s)
    assert 5 <= first_second <= 10 + 2, f"{first_second} messages in the second after resume at 10/s"
