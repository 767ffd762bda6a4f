"""Loading scenarios: a packaged name or a TOML path, merged over the defaults, overridden, validated.

Every value can be overridden by dotted path (`--set nodes.count=40`, `console.sim.scenario_overrides`).
Two shortcuts from issue #2: `clients.policy=NAME` switches every population to that policy,
`clients.count=N` scales the population. Validation errors name the path, the value and the allowed
range (`InputError`, exit status 2); the result is a `console.sim.scenario.Scenario`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from console.errors import InputError
from console.packaged import list_packaged, read_packaged
from console.policies import make_policy
from console.protocol import limits
from console.sim.injection import check_timeline
from console.sim.scenario import (
    EVENT_ACTIONS,
    Admission,
    Autoscale,
    Clients,
    LoadBalancer,
    Nodes,
    Population,
    Resync,
    Rollout,
    Scenario,
    TimelineEvent,
    node_id_digits,
    node_slots,
)
from console.sim.scenario_overrides import Override, apply_override, merge
from console.sim.scenario_schema import (
    BOOLEANS,
    CHOICES,
    DEFAULTS,
    RANGES,
    UNSET_CHOICES,
    check_range,
    check_window,
)

_SCENARIO_PACKAGE = "console.sim.scenarios"


def list_scenarios() -> list[tuple[str, str]]:
    """(name, title) of every packaged scenario, sorted by name."""
    return list_packaged(_SCENARIO_PACKAGE)


def load_scenario(name_or_path: str, overrides: Sequence[str | Override] = ()) -> Scenario:
    """A packaged scenario by name, or a TOML file by path, with `k=v` overrides applied and validated."""
    return build_scenario(read_packaged("scenario", _SCENARIO_PACKAGE, name_or_path), overrides)


def build_scenario(data: dict[str, Any], overrides: Sequence[str | Override] = ()) -> Scenario:
    merged = merge(copy.deepcopy(DEFAULTS), data, "")
    for override in overrides:
        apply_override(merged, override)
    return _validate(merged)


def fleet_at_start(d: dict[str, Any]) -> int:
    """The nodes a timeline may name before it adds any: the fleet, or the autoscaler's ceiling if higher."""
    autoscaled = d["autoscale"]["max_nodes"] if d["autoscale"]["enabled"] else 0
    return max(int(d["nodes"]["count"]), int(autoscaled))


def _validate(d: dict[str, Any]) -> Scenario:
    for path in RANGES:
        section, _, key = path.rpartition(".")
        holder = d[section] if section else d
        holder[key] = check_range(path, holder[key])
    for path, choices in CHOICES.items():
        section, _, key = path.rpartition(".")
        value = d[section][key]
        if value not in choices and not (path in UNSET_CHOICES and value == ""):
            unset = " (or unset: each population keeps its own)" if path in UNSET_CHOICES else ""
            raise InputError(path, value, "one of " + ", ".join(repr(c) for c in choices) + unset)
    for path in BOOLEANS:
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
        # Checked, not coerced: `--set …honours_hints=no` is the string "no", which bool() reads as true.
        if not isinstance(p["honours_hints"], bool):
            raise InputError(f"{where}.honours_hints", p["honours_hints"], "true or false")
        if not isinstance(p["name"], str):
            raise InputError(f"{where}.name", p["name"], "a string (the population's name)")
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
                name=p["name"],
                share=float(share),
                policy=policy,
                honours_hints=p["honours_hints"],
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
        node_id_digits(node_slots(int(d["nodes"]["count"]), int(d["autoscale"]["max_nodes"]), events)),
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
