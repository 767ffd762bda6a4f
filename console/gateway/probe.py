"""A raw HTTP upgrade prober: the cheapest possible connection attempt, for storms and cost measurements.

The SDK pays a full websockets client per attempt; to aim 5,000 attempts a second at one node from one
core, the admission test and the benchmark speak the upgrade request directly over asyncio streams.
"""

from __future__ import annotations

import asyncio
import base64
import os
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    elapsed_ms: float
    started_s: float


async def upgrade(
    host: str, port: int, path: str, read_hello: bool = True, timeout_s: float = 10.0
) -> Answer:
    """Send one upgrade request; read the status and headers (and the first frame on a 101); hang up."""
    started = time.time()
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
    try:
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout_s)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
        }
        if status == 101 and read_hello:
            first = await asyncio.wait_for(reader.readexactly(2), timeout_s)
            length = first[1] & 0x7F
            if length == 126:
                length = int.from_bytes(await reader.readexactly(2), "big")
            await reader.readexactly(length)
        return Answer(status, headers, 1000 * (time.time() - started), started)
    finally:
        writer.close()
