"""Adding capacity to a real fleet: who starts a new gateway node, and how many the fleet may hold.

The controller only follows nodes; starting one is a provisioner's job. `fleet up` owns its node processes,
so it hands the controller a `LoopbackProvisioner` that starts more of them the same way; a controller
over a nodes file it did not start has none, and then its fleet cannot add capacity (refused naming
`count`, with what to do instead: `NoProvisioner`). A cloud's autoscaling group would be another provisioner behind the same two members.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from console.errors import InputError

if TYPE_CHECKING:
    from console.gateway.nodes_file import NodeEntry
    from console.gateway.processes import NodeProcess


class NoProvisioner(InputError):
    """Add capacity on a controller over a nodes file, refused with what to do instead (the console's `c`
    says it at the key): the guard's words read "count: 1 is not allowed; expected no nodes: fleet
    'loopback' cannot add capacity (its backend provisions no nodes)". `field` stays `count`."""

    def __init__(self, fleet: str, count: int, nodes_file: str | None) -> None:
        where = nodes_file or "the --nodes file"
        self._said = (
            f"fleet {fleet!r} cannot add capacity — it adds no nodes: this controller starts no node "
            f"process; start one where the nodes run, add it to {where}'s [[nodes]] and restart the "
            "controller (it reads the file as it starts), or shed load with admission"
        )
        super().__init__("count", count, "nothing: this fleet adds no nodes")

    def _message(self) -> str:
        return f"{self.field}: {self._said}"


class NodeProvisioner(Protocol):
    """Starts gateway nodes for the controller."""

    max_nodes: int  # the most nodes the fleet may hold, those running included
    provisioning_s: float  # about how long a node takes to start (0: unknown)

    async def start_node(self, node_id: str) -> NodeEntry:
        """Start node `node_id` and return its entry once it listens; raise when it cannot start."""
        ...


@dataclass
class LoopbackProvisioner:
    """More `stormdeck gateway serve` children on loopback, like the ones `fleet up` started: the same
    controller token, history and arguments. Every node it starts is appended to `started`, the list
    `fleet up` stops by pid on the way out, and its client URL to `client_urls_file` (when given), the
    file `fleet up`'s load generator follows."""

    token: str
    started: list[NodeProcess]
    max_nodes: int
    args: list[str] = field(default_factory=list)
    history: str | None = None
    client_urls_file: Path | None = None
    #: Where each node's log goes (`NODE_ID.log`), as for `fleet up`'s first nodes; None: unnamed files.
    log_dir: Path | None = None
    #: A node child printed its URLs 0.42 s after it was started (3 starts, load average 1.0, on the shared
    #: 2-core machine); 2 s leaves room for a busier machine and the first frame that follows.
    provisioning_s: float = 2.0

    async def start_node(self, node_id: str) -> NodeEntry:
        from console.gateway.nodes_file import NodeEntry
        from console.gateway.processes import NodeProcess

        log_path = self.log_dir / f"{node_id}.log" if self.log_dir is not None else None
        node = NodeProcess(
            node_id, list(self.args), token=self.token, history=self.history, log_path=log_path
        )
        self.started.append(node)  # before it starts: stopped on the way out even if it hangs
        await asyncio.to_thread(node.start)
        self.write_client_urls()
        return NodeEntry(node.node_id, node.admin_url, node.url)

    def write_client_urls(self) -> None:
        """Rewrite the file whole (write, then rename), so a reader never sees half of it."""
        if self.client_urls_file is None:
            return
        partial = self.client_urls_file.with_suffix(".partial")
        partial.write_text("".join(f"{node.url}\n" for node in self.started if node.url))
        os.replace(partial, self.client_urls_file)


class Provisioning:
    """The controller's nodes on their way: asked for, not yet sending frames (shown `provisioning`).

    `add` checks the room, names the new nodes (`node-N`, numbered on from the fleet's, as `fleet up`
    names its first ones) and starts each in a task; `joined(entry)` runs when one listens, `failed(id,
    error)` when it cannot start. The controller drops an id from `pending` once its first frame arrives.
    """

    def __init__(self, provisioner: NodeProvisioner) -> None:
        self.provisioner = provisioner
        self.pending: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def add(
        self,
        count: int,
        known: Collection[str],
        joined: Callable[[NodeEntry], Awaitable[None]],
        failed: Callable[[str, Exception], None],
    ) -> list[str]:
        room = self.provisioner.max_nodes - len(known)
        if not 1 <= count <= room:
            raise InputError("count", count, f"an integer in [1, {max(room, 0)}] (room left in the fleet)")
        added: list[str] = []
        k = len(known)
        while len(added) < count:
            k += 1
            if f"node-{k}" not in known:
                added.append(f"node-{k}")
        for node_id in added:
            self.pending.add(node_id)
            task = asyncio.create_task(self._start(node_id, joined, failed))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return added

    async def _start(
        self,
        node_id: str,
        joined: Callable[[NodeEntry], Awaitable[None]],
        failed: Callable[[str, Exception], None],
    ) -> None:
        try:
            entry = await self.provisioner.start_node(node_id)
        except Exception as error:  # a failed start is the fleet's news, not the operator's 500
            self.pending.discard(node_id)
            failed(node_id, error)
            return
        await joined(entry)

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
