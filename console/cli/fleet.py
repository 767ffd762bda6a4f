"""`stormdeck fleet up`: a whole loopback fleet — gateway nodes, a publisher, the controller, a load.

Everything it starts is a child it knows by pid (or, for the controller, itself), and everything is
stopped on Ctrl-C, SIGTERM or SIGHUP (a closed terminal), children by pid, in order — another signal then
says what is left, the next kills it (`console.gateway.shutdown`). Killed outright, it stops nothing
itself: each child stops when it is gone (see `run_fleet_up`). While the fleet serves, a child
that exits is reported at once and judged (`console.gateway.watch`): Redis gone stops the fleet, exit 1.
"""

from __future__ import annotations

import argparse
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from console.cli.checks import (
    MAX_PUBLISH_RATE_PER_S,
    MAX_WORK_FACTOR,
    check_output_file,
    check_policy,
    check_port,
    check_publish_rate,
    check_work_factor,
    typed_float,
    typed_int,
)
from console.cli.groups import add_subcommands
from console.errors import InputError
from console.policies import POLICIES
from console.server.route_table import Server, routes_section
from console.stop_signals import UntilServing

if TYPE_CHECKING:
    from console.gateway.processes import NodeProcess, RedisProcess
    from console.gateway.shutdown import Ended
    from console.gateway.watch import Gone

MAX_NODES = 16
#: How long a child has to stop on SIGTERM before it is killed: a node (its clients' reconnect hints),
#: the load or the publisher, Redis.
NODE_GRACE_S = 8.0
CHILD_GRACE_S = 10.0
REDIS_GRACE_S = 5.0
#: The fleet's name: its audit log's default name comes from it (`stormdeck controller`'s default too).
FLEET_NAME = "loopback"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("fleet", help="a real gateway fleet on loopback")
    sub = add_subcommands(parser, dest="fleet_command", metavar="SUBCOMMAND")
    up = sub.add_parser(
        "up",
        help="start N gateway nodes, a publisher, the controller (fleet API) and optionally a load",
        description="Start N gateway node processes (Redis history when redis-server is installed, so "
        "clients resume on any node), publish on their channel, serve the fleet API over them, and "
        "optionally run a load generator. Ctrl-C, SIGTERM or a closed terminal stops everything it started "
        "(again while it stops: it says what is left; a third time: it kills the rest); a fleet up killed "
        "outright leaves no child behind either. "
        "A child that exits is reported at once (its name, exit status or signal, log file and what follows): "
        "a node stays down (the console shows it down) and a dead publisher or load leaves the rest running; "
        "Redis holds every node's history, so when it dies everything is stopped and fleet up exits 1. A load "
        "that ends its --duration is not a failure. Each child's log is in a directory it prints, kept when a "
        "child died, else removed on exit.",
        sections=[routes_section(Server.CONTROLLER)],
        examples=(
            "stormdeck fleet up --nodes 3",
            "stormdeck fleet up --nodes 3 --clients 3000 --policy full_jitter   # prints the URL and token file",
        ),
    )
    up.add_argument("--nodes", type=typed_int, default=3, help=f"gateway nodes, 1 to {MAX_NODES} (default 3)")
    up.add_argument(
        "--port",
        type=typed_int,
        default=8471,
        help="the fleet API's port, in [0, 65535] (default 8471; 0: any free)",
    )
    up.add_argument("--token-file", metavar="FILE", type=Path, help="fleet API tokens, as for `sim serve`")
    up.add_argument(
        "--audit-log",
        metavar="FILE",
        type=Path,
        help="the controller's audit log, as for `stormdeck controller`",
    )
    up.add_argument(
        "--clients", type=typed_int, default=0, help="load generator clients, 0 to 18,000 (default 0: none)"
    )
    up.add_argument(
        "--policy",
        default="full_jitter",
        help="the clients' backoff policy, one of " + ", ".join(sorted(POLICIES)) + " (default full_jitter)",
    )
    up.add_argument(
        "--publish-rate-per-s",
        metavar="N",
        type=typed_float,
        default=5.0,
        help=f"messages a second published on the nodes' channel, 0 to {MAX_PUBLISH_RATE_PER_S} (default 5)",
    )
    up.add_argument(
        "--work-factor",
        metavar="N",
        type=typed_int,
        default=1000,
        help=f"client token cost, PBKDF2 iterations, 1 to {MAX_WORK_FACTOR} (default 1000: ~0.2 ms)",
    )
    up.add_argument(
        "--duration",
        type=typed_float,
        default=0.0,
        help="how long the load runs, in seconds: at most 86400 (24 h); default 0: as long as the fleet",
    )
    up.set_defaults(handler=run_fleet_up)


def run_fleet_up(args: argparse.Namespace) -> int:
    if not 1 <= args.nodes <= MAX_NODES:
        raise InputError("--nodes", args.nodes, f"1 to {MAX_NODES}")
    if args.clients < 0 or args.clients > 18_000:
        raise InputError("--clients", args.clients, "0 to 18,000")
    from console.gateway.loadgen import MAX_DURATION_S  # the load's own bound: fleet up runs `loadgen`

    if not 0 <= args.duration <= MAX_DURATION_S:
        limit = f"seconds in [0, {MAX_DURATION_S:g}] ({MAX_DURATION_S / 3600:g} h; 0: as long as the fleet)"
        raise InputError("--duration", args.duration, limit)
    check_port("--port", args.port)  # before any node starts, not when the controller binds
    check_publish_rate("--publish-rate-per-s", args.publish_rate_per_s)  # nan too: every node is given it
    check_work_factor("--work-factor", args.work_factor)
    check_policy("--policy", args.policy)
    # What the controller reads once the children run, read now: nothing is started and then refused.
    if args.token_file is not None:
        from console.server.tokens import load_token_file

        load_token_file(args.token_file)
    if args.audit_log is not None:
        check_output_file("--audit-log", args.audit_log)
    from console.guards.config import load_default_thresholds

    load_default_thresholds()
    if args.port:  # a taken port was refused only once every child ran (and was then stopped)
        from console.server.runner import bind_socket

        try:
            bind_socket("127.0.0.1", args.port).close()
        except OSError as error:
            raise InputError("--port", args.port, f"a free port on 127.0.0.1 ({error.strerror})") from None
    from console.cli.controller import serve_controller
    from console.gateway.nodes_file import NodeEntry
    from console.gateway.processes import NodeProcess, RedisProcess
    from console.gateway.provision import LoopbackProvisioner
    from console.gateway.shutdown import Shutdown, Stop, stop_summary
    from console.gateway.watch import Child, Role, Watch

    node_token = secrets.token_urlsafe(24)
    # A SIGTERM or a closed terminal (SIGHUP) while the children start (before the controller's own
    # handlers) would end us without the `finally` below, leaving redis, the publisher and the nodes
    # started so far behind: make them Ctrl-C's. Once the controller has served, they no longer raise (see
    # UntilServing): the controller's own are put back to these when it returns, before the stops below.
    interrupts = UntilServing("fleet up: stopping…\n")
    interrupts.install()
    # Every child's log, named for the report of its death; kept when one died unplanned, else removed.
    logs = Path(tempfile.mkdtemp(prefix="stormdeck-fleet-logs-"))
    # Each child stops by itself when we end without stopping it (a SIGKILL, a hard crash): the nodes, the
    # publisher and the load when their stdin, our end of a pipe, closes; Redis by the parent-death signal.
    redis = (
        RedisProcess(log_path=logs / "redis.log", stop_with_parent=True)
        if shutil.which("redis-server")
        else None
    )
    nodes: list[NodeProcess] = []
    load: subprocess.Popen[bytes] | None = None
    publisher: subprocess.Popen[bytes] | None = None
    watch: Watch | None = None
    # The client URL of every node started, one a line: the load generator follows it, so clients that
    # reconnect spread over nodes added later (as behind a load balancer).
    state_dir = tempfile.TemporaryDirectory(prefix="stormdeck-fleet-")
    nodes_file = Path(state_dir.name) / "client-urls"
    try:
        if redis is not None:
            redis.start()
            # One publisher process feeds every node's channel through Redis, so killing a node (the
            # storm drill) never stops the stream. Without Redis each node publishes its own stream.
            command = [sys.executable, "-m", "console", "gateway", "publish", "--history", redis.url]
            command += ["--rate-per-s", str(args.publish_rate_per_s)]
            publisher = _start_logged(command, logs / "publisher.log")
        extra = ["--work-factor", str(args.work_factor)]
        if redis is None:
            extra += ["--publish-rate-per-s", str(args.publish_rate_per_s)]
        history = redis.url if redis else None
        for k in range(1, args.nodes + 1):
            node_id = f"node-{k}"
            node = NodeProcess(
                node_id, extra, token=node_token, history=history, log_path=logs / f"{node_id}.log"
            )
            nodes.append(node)  # before it starts: stopped below even if interrupted while starting
            node.start()
        # `act add-capacity` starts more nodes the same way, up to MAX_NODES; `nodes` holds them too, so
        # they are stopped below, and the nodes file lists them for the load generator.
        provisioner = LoopbackProvisioner(node_token, nodes, MAX_NODES, extra, history, nodes_file, logs)
        provisioner.write_client_urls()
        if args.clients:
            command = [sys.executable, "-m", "console", "loadgen", *(n.url for n in nodes)]
            command += ["--nodes-file", str(nodes_file)]
            command += [
                "--clients",
                str(args.clients),
                "--policy",
                args.policy,
                "--duration",
                str(args.duration),
            ]
            ramp_s = load_ramp_s(args.clients, args.duration)
            command += ["--work-factor", str(args.work_factor), "--ramp-s", f"{ramp_s:g}"]
            command += ["--workers", "1"]  # one child, so stopping it by pid stops every client
            load = _start_logged(command, logs / "load.log")
        entries = [NodeEntry(n.node_id, n.admin_url, n.url) for n in nodes]

        def announce_more(url: str, token_path: Path) -> None:
            interrupts.serving = True
            if watch is not None:
                watch.serving(url, token_path)  # the add-capacity command its reports name
            for node in nodes:
                print(f"node:   {node.node_id} pid {node.pid} clients {node.url} admin {node.admin_url}")
            if redis is not None:
                print(f"redis:  pid {redis.process.pid if redis.process else '?'} {redis.url}")
            else:
                print("redis:  not installed — in-process history: moved clients will not recover")
            if publisher is not None:
                print(f"publisher: pid {publisher.pid} {args.publish_rate_per_s:g} messages/s")
            if load is not None:
                length = f"for {args.duration:g} s" if args.duration else "until the fleet stops"
                print(f"load:   pid {load.pid} {args.clients} clients, policy {args.policy}, {length}")
            # The nodes' token work factor is fleet up's, not loadgen's default: a bare loadgen gets 401s.
            more = (
                f"stormdeck loadgen {nodes[0].url} --nodes-file {nodes_file} --work-factor {args.work_factor}"
            )
            print(f"more load: {more} --clients 1000 --policy fixed --duration 30")
            print(f"logs:   {logs} (kept if a child dies; a death is reported here at once)")

        def children() -> list[Child]:
            """The children to watch: every node that served (one that failed to start never did, and the
            controller reports it), Redis, the publisher and the load."""
            watched = [
                Child(n.node_id, Role.NODE, n.process, n.log_path) for n in nodes if n.process and n.url
            ]
            if redis is not None and redis.process is not None:
                watched.append(Child("redis", Role.REDIS, redis.process, redis.log_path))
            if publisher is not None:
                watched.append(Child("publisher", Role.PUBLISHER, publisher, logs / "publisher.log"))
            if load is not None:
                watched.append(Child("load", Role.LOAD, load, logs / "load.log"))
            return watched

        watch = Watch(children)

        return serve_controller(
            entries,
            node_token,
            "127.0.0.1",
            args.port,
            args.token_file,
            FLEET_NAME,
            announce_more,
            audit_path=args.audit_log,
            provisioner=provisioner,
            watch=watch.run,
        )
    finally:
        # Each child by pid, in order: the load and the publisher, the nodes (their clients get reconnect
        # hints), Redis last (the nodes' history). Another signal now says what is left, not cut it short.
        stops = [Stop(child, CHILD_GRACE_S) for child in (load, publisher) if child is not None]
        stops += [Stop(node.process, NODE_GRACE_S) for node in nodes if node.process is not None]
        stops += [Stop(redis.process, REDIS_GRACE_S)] if redis is not None and redis.process else []
        # Taken before the stops: which children were there to stop, and which had already gone.
        ended = _ended(load, publisher, nodes, redis, watch.gone if watch is not None else {})
        Shutdown(stops, signals=interrupts.late).run()
        state_dir.cleanup()
        # The logs go before anything is printed: with the output piped (`| tee`), Ctrl-C ends the reader
        # too, and the BrokenPipeError of the next print skipped their removal.
        kept = watch is not None and watch.failed
        if not kept:
            shutil.rmtree(logs, ignore_errors=True)
        print(stop_summary(ended), flush=True)
        if kept:
            print(f"logs kept: {logs}", flush=True)


def _ended(
    load: subprocess.Popen[bytes] | None,
    publisher: subprocess.Popen[bytes] | None,
    nodes: list[NodeProcess],
    redis: RedisProcess | None,
    gone: Mapping[int, Gone],
) -> list[Ended]:
    """`fleet up`'s children as its stop summary tells them, in the order they are stopped: each with how
    it went while the fleet served (`gone`, by pid: its watch's reports), or None — stopped now. A node
    that never started, or failed to start (no URL, already exited: the controller reported it), was not
    there to stop and is left out."""
    from console.gateway.shutdown import Ended
    from console.gateway.watch import Role

    def said(process: subprocess.Popen[bytes] | subprocess.Popen[str]) -> Gone | None:
        return gone.get(process.pid)

    ended = [Ended(Role.LOAD, "load", said(load))] if load is not None else []
    ended += [Ended(Role.PUBLISHER, "publisher", said(publisher))] if publisher is not None else []
    ended += [
        Ended(Role.NODE, node.node_id, said(node.process))
        for node in nodes
        if node.process is not None and (node.url or node.process.poll() is None)
    ]
    if redis is not None and redis.process is not None:
        ended.append(Ended(Role.REDIS, "redis", said(redis.process)))
    return ended


def load_ramp_s(clients: int, duration_s: float) -> float:
    """The load's first connects at ~500 a second (at least over a second), within a timed run: loadgen
    refuses a ramp longer than its --duration (those clients would never connect)."""
    ramp_s = max(1.0, clients / 500)
    return min(ramp_s, duration_s) if duration_s > 0 else ramp_s


def _start_logged(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    """A child whose stderr goes to `log` (its stdout, a report nobody reads, nowhere), which stops when
    we end (its stdin is our end of a pipe)."""
    from console.gateway.processes import child_env

    with open(log, "wb") as handle:  # the child holds its own copy
        return subprocess.Popen(
            [*command, "--stop-with-parent"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=handle,
            env=child_env(),
        )
