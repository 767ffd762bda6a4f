"""Scenarios: TOML files (package data in `scenarios/`), validated into typed, frozen records.

Every value can be overridden by dotted path (`--set nodes.count=40`). Two shortcuts from issue #2:
`clients.policy=NAME` switches every population to that policy, `clients.count=N` scales the population.
Validation errors name the path, the value and the allowed range (`InputError`, exit status 2).
The schema is documented in docs/scenarios.md; keep the two together.
"""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass, field
from typing import Any

from console.errors import InputError
from console.packaged import list_packaged, read_packaged
from console.policies import POLICIES, Policy, make_policy
from console.protocol import limits
from console.sim.injection import check_timeline

_SCENARIO_PACKAGE = "console.sim.scenarios"


@dataclass(frozen=True)
class Population:
    name: str
    share: float
    policy: Policy
    honours_hints: bool
    connect_timeout_s: float
    stable_period_s: float


@dataclass(frozen=True)
class Clients:
    count: int
    populations: tuple[Population, ...]
    churn_per_min: float
    resume_window_s: float
    max_lifetime_s: float
    lifetime_dither_s: float
    close_grace_s: float


@dataclass(frozen=True)
class Nodes:
    count: int
    capacity_connections: int
    hold_cpu_pct_at_capacity: float
    handshakes_per_s: float
    handshake_base_ms: float
    reject_cost: float
    timeout_cost: float
    accept_backlog: int
    overload_after_s: float
    overload_drop_per_s: float
    restart_s: float
    provisioning_s: float
    initial_fill: float


@dataclass(frozen=True)
class Admission:
    rate_per_s: float
    burst: int
    max_connections: int
    retry_after_s: tuple[float, float]


@dataclass(frozen=True)
class LoadBalancer:
    mode: str
    hot_nodes: int
    hot_share: float


@dataclass(frozen=True)
class Rollout:
    start_at_s: float
    batch_size: int
    interval_s: float
    mode: str
    pause_cpu_pct: float
    abort_cpu_pct: float
    abort_after_s: float
    drain_rate_per_s: float
    drain_deadline_s: float
    drain_hint_ms: tuple[int, int]


@dataclass(frozen=True)
class Resync:
    capacity_per_s: float
    timeout_s: float
    retry_s: tuple[float, float]
    breaker: bool
    breaker_failure_share: float
    breaker_window_s: float
    breaker_retry_after_s: float


@dataclass(frozen=True)
class Autoscale:
    enabled: bool
    cpu_target_pct: float
    step_nodes: int
    max_nodes: int
    cooldown_s: float


@dataclass(frozen=True)
class TimelineEvent:
    at_s: float
    action: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    seed_source: str
    teaches: str
    seed: int
    duration_s: float
    tick_ms: float
    clients: Clients
    nodes: Nodes
    admission: Admission
    lb: LoadBalancer
    rollout: Rollout | None
    resync: Resync
    autoscale: Autoscale
    events: tuple[TimelineEvent, ...]
    raw: dict[str, Any] = field(repr=False, compare=False)


# --- defaults: the whole schema in one place ------------------------------------------------------------

DEFAULTS: dict[str, Any] = {
    "name": "",
    "title": "",
    "seed_source": "",
    "teaches": "",
    "seed": 1,
    "duration_s": 600.0,
    "tick_ms": 10.0,
    "clients": {
        "count": 100_000,
        "policy": "",  # a name here switches every population to it
        # Steady reconnects ~80 k/min at 13 M clients (outage seed) ≈ 0.6 % of clients a minute.
        "churn_per_min": 0.0,
        "resume_window_s": 120.0,
        "max_lifetime_s": 0.0,  # 0 = no scheduled lifetime; Zuul ships 1800 (field guide)
        "lifetime_dither_s": 180.0,
        "close_grace_s": 4.0,
        "populations": [
            {
                "name": "all",
                "share": 1.0,
                "policy": "full_jitter",
                "params": {},
                "honours_hints": True,
                "connect_timeout_s": 10.0,
                "stable_period_s": 30.0,
            }
        ],
    },
    "nodes": {
        "count": 20,
        "capacity_connections": 50_000,
        "hold_cpu_pct_at_capacity": 40.0,
        "handshakes_per_s": 1500.0,
        "handshake_base_ms": 40.0,
        "reject_cost": 0.05,
        "timeout_cost": 0.3,
        "accept_backlog": 20_000,
        "overload_after_s": 5.0,
        "overload_drop_per_s": 0.15,
        "restart_s": 30.0,
        "provisioning_s": 240.0,
        "initial_fill": 0.0,  # 0 = spread the clients evenly; else share of capacity_connections
    },
    "admission": {
        "rate_per_s": 0.0,  # 0 = no token bucket
        "burst": 0,
        "max_connections": 0,  # 0 = no ceiling
        "retry_after_s": [1.0, 30.0],
    },
    "lb": {"mode": "uniform", "hot_nodes": 3, "hot_share": 0.1},
    "rollout": {
        "enabled": False,
        "start_at_s": 30.0,
        "batch_size": 1,
        "interval_s": 90.0,
        "mode": "abrupt",
        "pause_cpu_pct": 0.0,  # 0 = never pause (the outage's runbook)
        "abort_cpu_pct": 0.0,  # 0 = no abort criterion
        "abort_after_s": 30.0,
        "drain_rate_per_s": 833.0,
        "drain_deadline_s": 600.0,
        "drain_hint_ms": [1000, 30000],
    },
    "resync": {
        "capacity_per_s": 0.0,  # 0 = resyncs are free (no backend modelled)
        "timeout_s": 30.0,
        "retry_s": [5.0, 10.0],  # matrix-js-sdk: 5000 + random(5000) ms (field guide)
        "breaker": False,
        "breaker_failure_share": 0.05,  # sync-engine essay: > 5 % over a minute → Retry-After 30 s
        "breaker_window_s": 60.0,
        "breaker_retry_after_s": 30.0,
    },
    "autoscale": {
        "enabled": False,
        "cpu_target_pct": 60.0,
        "step_nodes": 10,
        "max_nodes": 0,
        "cooldown_s": 30.0,
    },
    "events": [],
}

EVENT_ACTIONS = {
    "restart_nodes": "restart nodes abruptly: `nodes` (ids or a count from `first`)",
    "kill_nodes": "nodes go down and stay down",
    "disconnect_fraction": "reset a `fraction` of every node's connections at once",
    "add_nodes": "provision `count` more nodes (ready after nodes.provisioning_s)",
    "start_rollout": "start the scenario's rollout (or with overrides)",
    "halt_rollout": "halt the running rollout",
    "set_admission": "change admission: rate_per_s, burst, max_connections, retry_after_s",
    "drain_nodes": "drain nodes: rate_per_s, deadline_s, hint_ms",
    "set_policy": "switch a population (`population`, default all) to `policy`",
}

_RANGES: dict[str, tuple[float, float]] = {
    "seed": (0, 2**63 - 1),
    "duration_s": (1, 86_400),
    "tick_ms": (1, 100),
    "clients.count": (0, 1_000_000_000),
    "clients.churn_per_min": (0, 1e9),
    "clients.resume_window_s": (0, 86_400),
    "clients.max_lifetime_s": (0, 86_400),
    "clients.lifetime_dither_s": (0, 86_400),
    "clients.close_grace_s": (0, 600),
    "nodes.count": limits.NODE_COUNT,
    "nodes.capacity_connections": (1, 100_000_000),
    "nodes.hold_cpu_pct_at_capacity": (0, 95),
    "nodes.handshakes_per_s": (1, 10_000_000),
    "nodes.handshake_base_ms": (0, 60_000),
    "nodes.reject_cost": (0, 1),
    "nodes.timeout_cost": (0, 1),
    "nodes.accept_backlog": (0, 100_000_000),
    "nodes.overload_after_s": (0, 3600),
    "nodes.overload_drop_per_s": (0, 1),
    "nodes.restart_s": (0, 3600),
    "nodes.provisioning_s": (0, 3600),
    "nodes.initial_fill": (0, 1),
    # The fleet API's PUT /v1/admission takes the same ranges (there null, not 0, means unlimited).
    "admission.rate_per_s": limits.ADMISSION_RATE_PER_S,
    "admission.burst": limits.ADMISSION_BURST,
    "admission.max_connections": limits.ADMISSION_MAX_CONNECTIONS,
    "lb.hot_nodes": (1, 10_000),
    "lb.hot_share": (0, 1),
    "rollout.start_at_s": (0, 86_400),
    # The fleet API's POST /v1/rollout and drains take the same high ends (console.protocol.limits).
    "rollout.batch_size": limits.ROLLOUT_BATCH_SIZE,
    "rollout.interval_s": (1, limits.ROLLOUT_INTERVAL_S[1]),
    "rollout.pause_cpu_pct": (0, 100),
    "rollout.abort_cpu_pct": (0, 100),
    "rollout.abort_after_s": (0, 3600),
    "rollout.drain_rate_per_s": (0.001, limits.BILLION),
    "rollout.drain_deadline_s": limits.DRAIN_DEADLINE_S,
    "resync.capacity_per_s": (0, 1e9),
    "resync.timeout_s": (0, 3600),
    "resync.breaker_failure_share": (0, 1),
    "resync.breaker_window_s": (1, 3600),
    "resync.breaker_retry_after_s": (0, 3600),
    "autoscale.cpu_target_pct": (1, 100),
    "autoscale.step_nodes": (1, 10_000),
    "autoscale.max_nodes": (0, 10_000),
    "autoscale.cooldown_s": (0, 3600),
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "lb.mode": ("uniform", "weighted", "skewed"),
    "rollout.mode": ("drain", "abrupt"),
    "clients.policy": tuple(sorted(POLICIES)),
}
#: Choices that may stay "" (unset): an unset clients.policy leaves each population its own policy.
_UNSET_CHOICES = frozenset({"clients.policy"})
_BOOLEANS = ("rollout.enabled", "resync.breaker", "autoscale.enabled")


def _default_at(path: str) -> Any:
    value: Any = DEFAULTS
    for part in path.split("."):
        value = value[part]
    return value


#: The ranged paths whose default is an integer: counts, sizes, the seed. They refuse 40.7 rather than
#: truncate it to 40; an integral float (1e6 in TOML) is taken as the integer it is.
_INTEGERS = frozenset(p for p in _RANGES if type(_default_at(p)) is int)


# --- loading ----------------------------------------------------------------------------------------


def list_scenarios() -> list[tuple[str, str]]:
    """(name, title) of every packaged scenario, sorted by name."""
    return list_packaged(_SCENARIO_PACKAGE)


def load_scenario(name_or_path: str, overrides: list[str] | tuple[str, ...] = ()) -> Scenario:
    """A packaged scenario by name, or a TOML file by path, with `k=v` overrides applied and validated."""
    return build_scenario(read_packaged("scenario", _SCENARIO_PACKAGE, name_or_path), overrides)


def build_scenario(data: dict[str, Any], overrides: list[str] | tuple[str, ...] = ()) -> Scenario:
    merged = _merge(copy.deepcopy(DEFAULTS), data, "")
    for override in overrides:
        _apply_override(merged, override)
    return _validate(merged)


def _merge(base: dict[str, Any], extra: dict[str, Any], prefix: str) -> dict[str, Any]:
    for key, value in extra.items():
        path = f"{prefix}{key}"
        if key not in base:
            raise InputError(path, value, "a known key: " + ", ".join(sorted(base)))
        if isinstance(base[key], dict) and key != "params":
            if not isinstance(value, dict):
                raise InputError(path, value, "a table")
            _merge(base[key], value, path + ".")
        else:
            base[key] = value
    return base


def _parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text  # a bare word: a string


def _apply_override(data: dict[str, Any], override: str) -> None:
    if "=" not in override:
        raise InputError("--set", override, "KEY=VALUE with a dotted KEY, e.g. nodes.count=40")
    key, _, text = override.partition("=")
    key = key.strip()
    value = _parse_value(text.strip())
    parts = key.split(".")
    if key == "clients.policy" or (len(parts) >= 3 and parts[:2] == ["clients", "policy"]):
        pass  # handled below with the population switch
    node: Any = data
    for depth, part in enumerate(parts[:-1]):
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise InputError(
                    key, value, f"an index below {len(node)} at '{'.'.join(parts[: depth + 1])}'"
                )
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, dict) and part == "params" and "policy" in node:
            node = node.setdefault(part, {})  # a population on its policy's defaults: set one of them
        else:
            known = ", ".join(sorted(node)) if isinstance(node, dict) else "nothing"
            raise InputError(
                key, value, f"a known path; under '{'.'.join(parts[:depth]) or '(top)'}': {known}"
            )
    leaf = parts[-1]
    if isinstance(node, dict):
        if leaf not in node and not (parts[-2:-1] == ["params"]):
            raise InputError(key, value, "a known path; known here: " + ", ".join(sorted(node)))
        if isinstance(node.get(leaf), dict) and leaf != "params":
            _set_table(node[leaf], key, value)
        else:
            node[leaf] = value
    elif isinstance(node, list) and leaf.isdigit() and int(leaf) < len(node):
        node[int(leaf)] = value
    else:
        raise InputError(key, value, "a known path")


def check_seed(seed: int | None, field: str = "--seed") -> None:
    """A seed given beside the scenario (`--seed`) has the range of the scenario's own `seed`: numpy's
    generator refuses a negative one with a traceback."""
    if seed is None:
        return
    try:
        check_range("seed", seed)
    except InputError as error:
        raise InputError(field, seed, error.allowed) from None


def _set_table(table: dict[str, Any], path: str, value: Any) -> None:
    """`--set nodes={count=40}` sets the keys it names; `--set nodes=3` would drop the whole table."""
    if not isinstance(value, dict):
        example = f"{path}.{next(iter(table))}" if table else path
        raise InputError(path, value, f"a table — set one of its keys, e.g. {example}")
    _merge(table, value, f"{path}.")


def check_range(path: str, value: Any) -> float:
    low, high = _RANGES[path]
    if path in _INTEGERS:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InputError(path, value, f"an integer in [{int(low)}, {int(high)}]")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise InputError(path, value, f"a number in [{low:g}, {high:g}]")
    return value


def fleet_at_start(d: dict[str, Any]) -> int:
    """The nodes a timeline may name before it adds any: the fleet, or the autoscaler's ceiling if higher."""
    autoscaled = d["autoscale"]["max_nodes"] if d["autoscale"]["enabled"] else 0
    return max(int(d["nodes"]["count"]), int(autoscaled))


def check_window(path: str, value: Any, low: float, high: float) -> tuple[float, float]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or any(isinstance(v, bool) or not isinstance(v, int | float) for v in value)
        or not limits.in_window(value, (low, high))
    ):
        raise InputError(path, value, limits.window_text((low, high)))
    return (value[0], value[1])


def _validate(d: dict[str, Any]) -> Scenario:
    for path in _RANGES:
        section, _, key = path.rpartition(".")
        holder = d[section] if section else d
        holder[key] = check_range(path, holder[key])
    for path, choices in _CHOICES.items():
        section, _, key = path.rpartition(".")
        value = d[section][key]
        if value not in choices and not (path in _UNSET_CHOICES and value == ""):
            unset = " (or unset: each population keeps its own)" if path in _UNSET_CHOICES else ""
            raise InputError(path, value, "one of " + ", ".join(repr(c) for c in choices) + unset)
    for path in _BOOLEANS:
        section, _, key = path.rpartition(".")
        if not isinstance(d[section][key], bool):
            raise InputError(path, d[section][key], "true or false")
    if d["rollout"]["enabled"] and d["rollout"]["batch_size"] > d["nodes"]["count"]:
        # Checked here, not when the engine starts the rollout, so the message names the path and why.
        count = d["nodes"]["count"]
        raise InputError(
            "rollout.batch_size",
            d["rollout"]["batch_size"],
            f"an integer in [1, {count}] (at most nodes.count)",
        )

    c = d["clients"]
    switch = c["policy"]
    pops_raw = c["populations"]
    if not isinstance(pops_raw, list) or not pops_raw:
        raise InputError("clients.populations", pops_raw, "a non-empty list of population tables")
    populations = []
    for i, p in enumerate(pops_raw):
        where = f"clients.populations.{i}"
        if not isinstance(p, dict):
            raise InputError(where, p, "a population table")
        if not isinstance(p.get("params", {}), dict):
            raise InputError(f"{where}.params", p["params"], "a table of the policy's parameters")
        unknown = set(p) - set(DEFAULTS["clients"]["populations"][0])
        if unknown:
            raise InputError(f"{where}.{sorted(unknown)[0]}", p[sorted(unknown)[0]], "a known population key")
        p = {**DEFAULTS["clients"]["populations"][0], **p}
        share = p["share"]
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share <= 1:
            raise InputError(f"{where}.share", share, "a share in (0, 1]")
        for key, high in (("connect_timeout_s", 600), ("stable_period_s", 86_400)):
            if isinstance(p[key], bool) or not isinstance(p[key], int | float) or not 0 < p[key] <= high:
                raise InputError(f"{where}.{key}", p[key], f"a number in (0, {high}]")
        policy_name = switch or p["policy"]
        params = {} if switch and switch != p["policy"] else p["params"]
        try:
            policy = make_policy(policy_name, params)
        except (
            InputError
        ) as error:  # make_policy says "policy.base_ms"; the scenario's path is params.base_ms
            field = error.field.replace("policy.", "params.", 1)
            raise InputError(f"{where}.{field}", error.value, error.allowed) from None
        populations.append(
            Population(
                name=str(p["name"]),
                share=float(share),
                policy=policy,
                honours_hints=bool(p["honours_hints"]),
                connect_timeout_s=float(p["connect_timeout_s"]),
                stable_period_s=float(p["stable_period_s"]),
            )
        )
    total_share = sum(p.share for p in populations)
    if abs(total_share - 1.0) > 1e-6:
        raise InputError("clients.populations.*.share", round(total_share, 6), "shares that add up to 1")

    n = d["nodes"]
    a = d["admission"]
    r = d["rollout"]
    s = d["resync"]
    events = []
    if not isinstance(d["events"], list):
        raise InputError("events", d["events"], "a list of event tables")
    for i, e in enumerate(d["events"]):
        if not isinstance(e, dict) or "at_s" not in e or "action" not in e:
            raise InputError(f"events.{i}", e, "a table with at_s and action")
        if e["action"] not in EVENT_ACTIONS:
            raise InputError(f"events.{i}.action", e["action"], "one of " + ", ".join(sorted(EVENT_ACTIONS)))
        at = e["at_s"]
        if isinstance(at, bool) or not isinstance(at, int | float) or not 0 <= at <= d["duration_s"]:
            raise InputError(f"events.{i}.at_s", at, f"a time in [0, duration_s = {d['duration_s']:g}]")
        params = {k: v for k, v in e.items() if k not in ("at_s", "action")}
        events.append(TimelineEvent(float(at), e["action"], params))
    # Every event whole before anything runs: a bad one found when it fires would end a run half-written.
    check_timeline(
        [(f"events.{i}", event.at_s, event.action, event.params) for i, event in enumerate(events)],
        fleet_at_start(d),
        [population.name for population in populations],
    )
    events.sort(key=lambda ev: ev.at_s)

    rollout = None
    if r["enabled"]:
        rollout = Rollout(
            start_at_s=float(r["start_at_s"]),
            batch_size=int(r["batch_size"]),
            interval_s=float(r["interval_s"]),
            mode=r["mode"],
            pause_cpu_pct=float(r["pause_cpu_pct"]),
            abort_cpu_pct=float(r["abort_cpu_pct"]),
            abort_after_s=float(r["abort_after_s"]),
            drain_rate_per_s=float(r["drain_rate_per_s"]),
            drain_deadline_s=float(r["drain_deadline_s"]),
            drain_hint_ms=tuple(
                int(v) for v in check_window("rollout.drain_hint_ms", r["drain_hint_ms"], *limits.HINT_MS)
            ),
        )
    return Scenario(
        name=str(d["name"]),
        title=str(d["title"]),
        seed_source=str(d["seed_source"]),
        teaches=str(d["teaches"]),
        seed=int(d["seed"]),
        duration_s=float(d["duration_s"]),
        tick_ms=float(d["tick_ms"]),
        clients=Clients(
            count=int(c["count"]),
            populations=tuple(populations),
            churn_per_min=float(c["churn_per_min"]),
            resume_window_s=float(c["resume_window_s"]),
            max_lifetime_s=float(c["max_lifetime_s"]),
            lifetime_dither_s=float(c["lifetime_dither_s"]),
            close_grace_s=float(c["close_grace_s"]),
        ),
        nodes=Nodes(
            **{
                k: (int(v) if k in ("count", "capacity_connections", "accept_backlog") else float(v))
                for k, v in n.items()
            }
        ),
        admission=Admission(
            rate_per_s=float(a["rate_per_s"]),
            burst=int(a["burst"]),
            max_connections=int(a["max_connections"]),
            retry_after_s=check_window("admission.retry_after_s", a["retry_after_s"], *limits.RETRY_AFTER_S),
        ),
        lb=LoadBalancer(
            mode=d["lb"]["mode"], hot_nodes=int(d["lb"]["hot_nodes"]), hot_share=float(d["lb"]["hot_share"])
        ),
        rollout=rollout,
        resync=Resync(
            capacity_per_s=float(s["capacity_per_s"]),
            timeout_s=float(s["timeout_s"]),
            retry_s=check_window("resync.retry_s", s["retry_s"], 0, 3600),
            breaker=bool(s["breaker"]),
            breaker_failure_share=float(s["breaker_failure_share"]),
            breaker_window_s=float(s["breaker_window_s"]),
            breaker_retry_after_s=float(s["breaker_retry_after_s"]),
        ),
        autoscale=Autoscale(
            **{k: (int(v) if k in ("step_nodes", "max_nodes") else v) for k, v in d["autoscale"].items()}
        ),
        events=tuple(events),
        raw=d,
    )
