"""`stormdeck gateway serve`: one reference gateway node (client WebSocket port + node admin API)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress

from console.cli.checks import (
    MAX_PUBLISH_RATE_PER_S,
    MAX_WORK_FACTOR,
    check_in_range,
    check_port,
    check_publish_rate,
    check_work_factor,
    range_text,
    typed_float,
    typed_int,
)
from console.cli.groups import add_subcommands
from console.errors import InputError
from console.gateway.tokens import DEFAULT_WORK_FACTOR
from console.protocol import limits
from console.stop_signals import answering_stop_signals, soon, stop_when_stdin_closes

#: A real node's planning capacity, connections: at most 10 million. The largest published single-host
#: figures are a few million (WhatsApp's 2 M on one FreeBSD box, Phoenix's 2 M), so 10 M leaves room and
#: still refuses a typo such as 1e14. (The simulator's nodes.capacity_connections goes further, for
#: what-ifs.)
CAPACITY_CONNECTIONS = (1, 10_000_000)
#: The heartbeat interval, s (also how long a pong may take): at most an hour. Load balancers and NATs cut
#: an idle connection within minutes (AWS ALB: 60 s by default, 4000 s at most), so a slower heartbeat
#: keeps nothing open and finds a dead client only after hours.
PING_INTERVAL_S = (0, 3600)
#: The Redis URLs a node's history and the publisher take (redis-py's TCP and Unix socket forms).
HISTORY_SCHEMES = ("redis://", "unix://")


#: What `--host` takes: the reference fleet stays on loopback. An address, not a name: "localhost" may
#: resolve to another address family than the URLs the node prints and a nodes file names.
LOOPBACK_HOSTS = "a loopback IP address: 127.0.0.0/8 or ::1 (the reference fleet stays on loopback)"


def check_loopback_host(value: str) -> None:
    try:
        if ipaddress.ip_address(value).is_loopback:
            return
    except ValueError:
        pass
    raise InputError("--host", value, LOOPBACK_HOSTS)


#: The node's admission limits in the operator's unit, for --help and the errors alike.
ADMISSION_WORDS = {
    "rate_per_s": "new connections a second",
    "burst": "connections admitted at once",
    "max_connections": "connections this node holds at most",
}


def _whole_range(bounds: tuple[int, int]) -> str:
    """A whole number's range above an open low bound, as the values it takes: (0, 10] → "[1, 10]"."""
    return range_text((bounds[0] + 1, bounds[1]))


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("gateway", help="the reference gateway node")
    sub = add_subcommands(parser, dest="gateway_command", metavar="SUBCOMMAND")
    serve = sub.add_parser(
        "serve",
        help="serve clients on --port and the node admin API on --admin-port",
        description="Run one reference gateway node on loopback: clients connect by WebSocket to --port "
        "(/channel/CHANNEL) and get the channel's messages, with admission control, resume and scheduled "
        "connection lifetimes; a controller drives it through the node admin API on --admin-port (the "
        "token of --token-file). Runs until SIGINT, SIGTERM or SIGHUP (a closed terminal), then shuts down in order.",
        examples=(
            "stormdeck gateway serve --port 9001 --admin-port 9101 --node-id a --token-file controller.token",
            "stormdeck gateway serve --port 9002 --admin-port 9102 --node-id b --rate-per-s 500 --burst 50",
        ),
    )
    serve.add_argument(
        "--port",
        type=typed_int,
        required=True,
        help="client WebSocket port, in [0, 65535] (0: any free port)",
    )
    serve.add_argument(
        "--admin-port",
        metavar="PORT",
        type=typed_int,
        required=True,
        help="node admin API port, in [0, 65535] (0: any free port)",
    )
    serve.add_argument(
        "--node-id",
        metavar="ID",
        required=True,
        help="the node's id, as the controller's nodes file names it",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="a loopback IP address to bind, in 127.0.0.0/8 or ::1 (default 127.0.0.1)",
    )
    serve.add_argument(
        "--token-file",
        metavar="FILE",
        help="file holding the controller's token (else a random one is printed)",
    )
    serve.add_argument(
        "--history", metavar="URL", help="replay buffer in Redis (redis://…); default in-process"
    )
    serve.add_argument(
        "--channel", default="fleet", help="the channel clients subscribe to at /channel/NAME (default fleet)"
    )
    serve.add_argument(
        "--publish-rate-per-s",
        metavar="N",
        type=typed_float,
        default=0.0,
        help=f"publish on the channel, messages a second in [0, {MAX_PUBLISH_RATE_PER_S}] (default 0: off)",
    )
    admission = serve.add_argument_group("admission")
    admission.add_argument(
        "--rate-per-s",
        metavar="R",
        type=typed_float,
        help=f"{ADMISSION_WORDS['rate_per_s']} (token bucket refill), in "
        f"{range_text(limits.ADMISSION_RATE_PER_S, True)} (default: unlimited)",
    )
    admission.add_argument(
        "--burst",
        type=typed_int,
        help=f"token bucket size: {ADMISSION_WORDS['burst']}, a whole number in "
        f"{_whole_range(limits.ADMISSION_BURST)} (default: one second of rate)",
    )
    admission.add_argument(
        "--max-connections",
        metavar="N",
        type=typed_int,
        help=f"connection ceiling: {ADMISSION_WORDS['max_connections']}, a whole number in "
        f"{_whole_range(limits.ADMISSION_MAX_CONNECTIONS)} (default: none)",
    )
    admission.add_argument(
        "--retry-after-s",
        type=typed_float,
        nargs=2,
        default=(1.0, 30.0),
        metavar=("MIN", "MAX"),
        help="the window a rejected client's Retry-After is drawn from, seconds, "
        f"0 ≤ MIN ≤ MAX ≤ {limits.RETRY_AFTER_S[1]:g} (default 1 30)",
    )
    admission.add_argument(
        "--work-factor",
        metavar="N",
        type=typed_int,
        default=None,
        help=f"client token PBKDF2 iterations, in [1, {MAX_WORK_FACTOR}] (default {DEFAULT_WORK_FACTOR})",
    )
    life = serve.add_argument_group("connection lifetime (Zuul's defaults)")
    life.add_argument(
        "--lifetime-s",
        metavar="S",
        type=typed_float,
        default=1800.0,
        help="close each connection after this long, seconds in "
        f"{range_text(limits.CONNECTION_LIFETIME_S, True)} (default 1800)",
    )
    life.add_argument(
        "--lifetime-dither-s",
        metavar="S",
        type=typed_float,
        default=180.0,
        help="minus a random share of this, so lifetimes do not end together, 0 to --lifetime-s (default 180)",
    )
    life.add_argument(
        "--close-grace-s",
        metavar="S",
        type=typed_float,
        default=4.0,
        help="after asking a client to reconnect, wait this long for it to leave first, seconds in "
        f"{range_text(limits.CLOSE_GRACE_S)} (default 4)",
    )
    serve.add_argument(
        "--ping-interval-s",
        metavar="S",
        type=typed_float,
        default=20.0,
        help=f"heartbeat interval, seconds in {range_text(PING_INTERVAL_S, True)} (default 20)",
    )
    serve.add_argument(
        "--capacity",
        type=typed_int,
        default=10_000,
        help=f"planning capacity for headroom, connections in {range_text(CAPACITY_CONNECTIONS)} "
        "(default 10000)",
    )
    serve.add_argument(
        "--seed", type=typed_int, help="seed of the node's random draws, 0 to 2**63 - 1 (default: unseeded)"
    )
    # `fleet up`'s children: stop when its end of our stdin closes, so a `fleet up` killed outright leaves
    # no node (nor publisher) behind (console.stop_signals).
    serve.add_argument("--stop-with-parent", action="store_true", help=argparse.SUPPRESS)
    serve.set_defaults(handler=_serve)
    publish = sub.add_parser(
        "publish",
        help="publish on a channel held in Redis, for every node of a fleet (until SIGTERM)",
        description="Publish --rate-per-s messages a second on --channel into the Redis history the nodes "
        "share (the --history their `gateway serve` was given), so every node of the fleet delivers them "
        "with the same offsets. Runs until SIGINT, SIGTERM or SIGHUP.",
        examples=("stormdeck gateway publish --history redis://127.0.0.1:6379/0 --rate-per-s 5",),
    )
    publish.add_argument("--history", metavar="URL", required=True, help="redis://…, as the nodes'")
    publish.add_argument("--channel", default="fleet", help="the nodes' channel (default fleet)")
    publish.add_argument(
        "--rate-per-s",
        metavar="R",
        type=typed_float,
        default=5.0,
        help="messages a second, in (0, 10000] (default 5)",
    )
    publish.add_argument("--stop-with-parent", action="store_true", help=argparse.SUPPRESS)
    publish.set_defaults(handler=_publish)


def _check(args: argparse.Namespace) -> None:
    from console.sim.scenario_schema import check_seed  # the seed range every command's --seed has

    check_loopback_host(args.host)
    check_port("--port", args.port)
    check_port("--admin-port", args.admin_port)
    # Every number is checked against its range, which nan fails as inf does (nan passes no comparison):
    # refused naming the range, not "a finite number".
    # The admission the node starts with has the ranges of the one the admin API's PUT takes
    # (console.protocol.limits): --retry-after-s 1 1e9 told refused clients to come back in 31 years.
    if args.rate_per_s is not None:
        rate_words = ADMISSION_WORDS["rate_per_s"]
        check_in_range(
            "--rate-per-s", args.rate_per_s, limits.ADMISSION_RATE_PER_S, rate_words, low_open=True
        )
    for name, bounds in (
        ("burst", limits.ADMISSION_BURST),
        ("max_connections", limits.ADMISSION_MAX_CONNECTIONS),
    ):
        value = getattr(args, name)
        if value is not None and not bounds[0] < value <= bounds[1]:
            allowed = f"{ADMISSION_WORDS[name]}, a whole number in {_whole_range(bounds)}"
            raise InputError(f"--{name.replace('_', '-')}", value, allowed)
    if not limits.in_window(args.retry_after_s, limits.RETRY_AFTER_S):
        raise InputError(
            "--retry-after-s", list(args.retry_after_s), limits.window_text(limits.RETRY_AFTER_S) + " seconds"
        )
    if args.history is not None:
        _check_history(args.history)
    check_in_range("--lifetime-s", args.lifetime_s, limits.CONNECTION_LIFETIME_S, "seconds", low_open=True)
    if not 0 <= args.lifetime_dither_s <= args.lifetime_s:
        raise InputError("--lifetime-dither-s", args.lifetime_dither_s, "0 ≤ dither ≤ --lifetime-s")
    check_in_range("--close-grace-s", args.close_grace_s, limits.CLOSE_GRACE_S, "seconds")
    check_in_range("--ping-interval-s", args.ping_interval_s, PING_INTERVAL_S, "seconds", low_open=True)
    check_publish_rate("--publish-rate-per-s", args.publish_rate_per_s)
    if args.work_factor is not None:
        check_work_factor("--work-factor", args.work_factor)
    check_in_range("--capacity", args.capacity, CAPACITY_CONNECTIONS, "connections")
    check_seed(args.seed)
    for option, name in (("--node-id", args.node_id), ("--channel", args.channel)):
        if not name.strip() or "/" in name or name != name.strip():
            raise InputError(option, name, "a non-empty name without '/' or surrounding spaces")


def _serve(args: argparse.Namespace) -> int:
    _check(args)
    from console.gateway.node import Lifetime, NodeConfig
    from console.gateway.serve import RunningNode, read_token_file, serve_until_signalled
    from console.gateway.tokens import DEFAULT_WORK_FACTOR, TokenSigner
    from console.protocol import AdmissionSettings

    token = read_token_file(args.token_file) if args.token_file else None
    config = NodeConfig(
        node_id=args.node_id,
        host=args.host,
        port=args.port,
        channel=args.channel,
        admission=AdmissionSettings(
            rate_per_s=args.rate_per_s,
            burst=args.burst,
            max_connections=args.max_connections,
            retry_after_s=tuple(args.retry_after_s),
        ),
        signer=TokenSigner(work_factor=args.work_factor or DEFAULT_WORK_FACTOR),
        lifetime=Lifetime(args.lifetime_s, args.lifetime_dither_s, args.close_grace_s),
        ping_interval_s=args.ping_interval_s,
        ping_timeout_s=args.ping_interval_s,
        capacity_connections=args.capacity,
        publish_rate_per_s=args.publish_rate_per_s,
        seed=args.seed,
    )
    try:
        running = RunningNode(config, args.admin_port, args.history, token)
    except OSError as error:
        allowed = f"a free port on {args.host} ({error.strerror})"
        raise InputError("--admin-port", args.admin_port, allowed) from None
    if args.stop_with_parent:
        stop_when_stdin_closes()
    # The token it made is said once the node serves: said before, a node on a taken --port printed a
    # secret for a process that never ran.
    asyncio.run(serve_until_signalled(running, say_token=token is None))
    return 0


def _check_history(url: str) -> None:
    if not url.startswith(HISTORY_SCHEMES):
        raise InputError("--history", url, "a Redis URL: redis://HOST:PORT or unix://SOCKET-PATH")


def _publish(args: argparse.Namespace) -> int:
    _check_history(args.history)
    if not 0 < args.rate_per_s <= MAX_PUBLISH_RATE_PER_S:
        raise InputError("--rate-per-s", args.rate_per_s, f"a rate in (0, {MAX_PUBLISH_RATE_PER_S}]")
    from console.gateway.history import RedisHistory
    from console.gateway.node import publish_forever

    async def run() -> None:
        history = RedisHistory(args.history, args.channel)
        await history.start()
        task = asyncio.create_task(publish_forever(history, args.rate_per_s, "publisher"))
        with answering_stop_signals(soon(asyncio.get_running_loop(), task.cancel)):
            print(f"publishing on {args.channel!r} at {args.rate_per_s:g}/s", flush=True)
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await history.stop()

    if args.stop_with_parent:
        stop_when_stdin_closes()
    asyncio.run(run())
    return 0
