"""`stormdeck plan drain URL NODE`: the server's largest safe drain of a node, and the command to apply it."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from console.cli.checks import check_fleet_url
from console.client.actions import ActionClient
from console.client.token import load_token
from console.model.actions.answer import format_value
from console.model.actions.drain import no_rate_text, plan_basis


def _run_plan(args: argparse.Namespace) -> int:
    check_fleet_url(args.url)
    token = load_token(args.token_file)

    async def go() -> dict[str, Any]:
        async with ActionClient(args.url, token) as client:
            return await client.drain_plan(args.node)

    plan = asyncio.run(go())
    print(json.dumps(plan, indent=2) if args.json else render_plan(plan, args.url))
    return 0


def render_plan(plan: dict[str, Any], url: str) -> str:
    """A drain plan as text: its figures written as the console writes them (`format_value`: "4,550
    closes/s", "force-closed then: 7,950"), the `stormdeck act` command as it is typed (no separators)."""
    hint = plan["hint_ms"]
    rate = plan["rate_per_s"]
    # With no rate the basis ("largest safe rate …, limited by …") names a rate there is not: the last line
    # says why there is none.
    basis = f" ({plan_basis(plan)})" if rate > 0 else ""
    lines = [f"drain plan for {', '.join(plan['nodes'])}{basis}:"]
    if "connections" in plan:  # (an older server's plan does not say)
        lines.append(f"  moves     {format_value(plan['connections'])} connections to the other nodes")
    lines += [
        f"  rate      {format_value(rate)} closes/s per node",
        f"  duration  {_plan_duration(plan['duration_s'])}",
        f"  deadline  {format_value(plan['deadline_s'])} s  (force-closed then: {format_value(plan['force_closed'])})",
        f"  hint      {hint[0]}:{hint[1]} ms",
    ]
    if rate <= 0:
        lines.append(f"  {no_rate_text(plan)}")
        return "\n".join(lines)
    lines.append(
        f"  act:      stormdeck act {url} drain {plan['nodes'][0]} --rate {rate:g} "
        f"--deadline {plan['deadline_s']:g} --hint {hint[0]}:{hint[1]}"
    )
    return "\n".join(lines)


def _plan_duration(duration_s: float | None) -> str:
    """Until the fullest node is empty: "0 s" said a drain of a few connections took no time, or none known."""
    if duration_s is None:
        return "never (no safe rate now)"
    if duration_s == 0:
        return "0 s (no connections to close)"
    if duration_s < 1:
        return f"under 1 s ({format_value(duration_s * 1000)} ms)"
    return f"{format_value(duration_s)} s"
