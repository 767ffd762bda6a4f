"""`stormdeck act URL …`, `stormdeck plan drain URL NODE`, `stormdeck audit verify FILE` (issue #4, §5).

Exit codes: 0 applied (or dry run shown, or nothing to apply), 3 needs confirmation (or a big change not sent), 4 blocked, 2 bad
input, 1 transport or auth error. `--yes` confirms a `confirm` verdict and a big change (checked
here, as the console does, with `console.model.big_changes`); `--typed NAME` answers a `typed` one (and a
`confirm`).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import math
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, get_args

from console.cli.checks import (
    as_typed,
    check_finite,
    check_fleet_url,
    fleet_url_argument,
    range_text,
    typed_float,
    typed_int,
)
from console.cli.groups import CommandParser, add_subcommands
from console.client.actions import ActionAnswer, ActionClient, Reply, route
from console.client.token import load_token
from console.errors import InputError, MissingInput
from console.model.actions.answer import check_mark, format_value, limit_text, read_answer, what_would_pass
from console.model.actions.drain import no_rate_text, plan_basis
from console.model.big_changes import BigChange, big_changes
from console.protocol import MAX_ADD_NODES, ActionRequest, VerdictLevel, limits
from console.protocol.requests import AdmissionRequest, CapacityRequest, DrainRequest, RolloutRequest, Window

if TYPE_CHECKING:
    from pydantic import BaseModel

    from console.model.actions.form import Prefill

EXIT = {
    Reply.APPLIED: 0,
    Reply.DRY_RUN: 0,
    Reply.NEEDS_CONFIRMATION: 3,
    Reply.BLOCKED: 4,
    Reply.BAD_INPUT: 2,
    Reply.DENIED: 1,
}


#: The fleet API's address in the examples of --help (`stormdeck sim serve`'s default).
EXAMPLE_URL = "http://127.0.0.1:8470"
TOKEN_FILE_HELP = "the token file (default: the environment's STORMDECK_TOKEN)"
#: The request models' bound on an override reason (characters), as --help says it.
#: What every action exits with (README: "Exit codes"), in each action's --help as in `act --help`.
ACT_EXITS = (
    "Exit 0 applied (or dry run shown, or nothing to apply: not sent), 3 needs confirmation (or a big change not sent), 4 blocked, 2 bad "
    "input (an option out of its range, named, before anything is sent; a missing token), 1 transport or "
    "auth (a token the fleet refuses), or a URL that answers but is not a stormdeck fleet API."
)
OVERRIDE_REASON_CHARS = next(
    rule.max_length
    for rule in ActionRequest.model_fields["override_reason"].metadata
    if hasattr(rule, "max_length")
)


class _ActionParser(CommandParser):
    """argparse reads `--hint -5:10` as two options and says only "expected one argument": say how to
    pass a value that starts with '-' (the server then names the range, e.g. of hint_ms)."""

    def error(self, message: str) -> NoReturn:
        match = re.fullmatch(r"argument (--[\w-]+): expected one argument", message)
        if match:
            option = match.group(1)
            message += f" (a value starting with '-' is joined with '=': {option}=-5:10, not {option} -5:10)"
        super().error(message)


def register(subparsers: argparse._SubParsersAction) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--token-file", type=Path, metavar="FILE", help=TOKEN_FILE_HELP)
    common.add_argument("--json", action="store_true", help="print the server's answer as JSON")
    common.add_argument("--dry-run", action="store_true", help="judge only; apply nothing")
    common.add_argument(
        "--yes",
        action="store_true",
        help="go ahead: confirm a `confirm` verdict (default: exit 3 asking for it); for admission and "
        "add-capacity also send a big change, otherwise not sent (exit 3): an admission limit cut below half "
        "or raised above double, set where there was none, or lifted; more nodes to add than the console's "
        "pre-fill",
    )
    common.add_argument(
        "--typed",
        metavar="NAME",
        help="answer a `typed` verdict: the node id or fleet name it asks for (default none: a typed verdict "
        "exits 3 naming it)",
    )
    common.add_argument(
        "--override-reason",
        metavar="TEXT",
        help=f"admin only: force a blocked action, saying why (audited), at most {OVERRIDE_REASON_CHARS} "
        "characters (default none: a blocked action exits 4)",
    )

    act = subparsers.add_parser(
        "act",
        help="act on a fleet through its API: drain, undrain, rollout, admission, add capacity (guarded, "
        "audited)",
        description="Send a guarded action. A big change (an admission limit cut below half of what the fleet "
        "runs or raised above double, set where there was none, or lifted; more nodes to add than the "
        "console's pre-fill) is shown before → after and not sent without --yes, as the console asks first. Exit 0 applied (or dry run), 3 needs confirmation "
        "(or a big change not sent), 4 blocked, "
        "2 bad input, 1 transport or auth error, or a URL that answers but is not a stormdeck fleet API.",
    )

    url = act.add_argument("url", metavar="URL", help="the fleet API, e.g. http://127.0.0.1:8470")
    actions = add_subcommands(act, dest="action", metavar="ACTION", parser_class=_ActionParser)
    # Checked while parsing, so `act drain gw-010 …` (the URL forgotten) names the URL, not the node; the
    # actions' names (known only now) get the command back in order. `act drain` alone too, not act's help.
    url.type = fleet_url_argument("act", "ACTION", actions.choices)

    drain = actions.add_parser(
        "drain",
        parents=[common],
        help="drain a node",
        description="Take NODE out of rotation and close its connections at --rate a second, each told to "
        "come back after a random delay in the --hint window; what is left at --deadline is force-closed "
        "(POST /v1/nodes/NODE/drain). The server judges it against the other nodes' room first; `stormdeck "
        "plan drain` gives the largest safe rate.",
        examples=(
            f"stormdeck plan drain {EXAMPLE_URL} gw-017   # the largest safe drain, as a command",
            f"stormdeck act {EXAMPLE_URL} drain gw-017 --rate 50 --deadline 600 --hint 1000:30000 --dry-run",
        ),
    )
    drain.add_argument("node", metavar="NODE", help="the node to drain, e.g. gw-017")
    drain.add_argument(
        "--rate",
        type=typed_float,
        required=True,
        metavar="R",
        help=f"closes per second per node, in {range_text((0, limits.BILLION), True)}; required",
    )
    drain.add_argument(
        "--deadline",
        type=typed_float,
        required=True,
        metavar="S",
        help=f"seconds until what is left is force-closed, in {range_text(limits.DRAIN_DEADLINE_S)} (a week); "
        "required",
    )
    drain.add_argument(
        "--hint",
        required=True,
        metavar="MIN:MAX",
        help=f"reconnect hint window, ms: {limits.HINT_MS[0]} ≤ MIN ≤ MAX ≤ {limits.HINT_MS[1]}, e.g. "
        "1000:30000; required",
    )
    drain.set_defaults(handler=_run_act, build=_drain, request=DrainRequest)

    undrain = actions.add_parser(
        "undrain",
        parents=[common],
        help="put a node back into rotation",
        description="Put a draining or drained NODE back into rotation (POST /v1/nodes/NODE/undrain).",
        examples=(f"stormdeck act {EXAMPLE_URL} undrain gw-017",),
    )
    undrain.add_argument("node", metavar="NODE", help="a draining or drained node")
    undrain.set_defaults(handler=_run_act, build=_undrain, request=ActionRequest)

    rollout = actions.add_parser("rollout", help="start, halt or resume a rolling restart")
    steps = add_subcommands(rollout, dest="step", metavar="STEP", parser_class=_ActionParser)
    start = steps.add_parser(
        "start",
        parents=[common],
        help="start a rollout",
        description="Restart the fleet --batch-size nodes at a time, a batch every --interval seconds, "
        "pausing while a surviving node's CPU is over --pause-cpu (POST /v1/rollout).",
        examples=(
            f"stormdeck act {EXAMPLE_URL} rollout start --batch-size 2 --interval 120 --dry-run",
            f"stormdeck act {EXAMPLE_URL} rollout halt",
        ),
    )
    start.add_argument(
        "--batch-size",
        type=typed_int,
        required=True,
        metavar="N",
        help=f"nodes restarted at a time, 1 to {limits.ROLLOUT_BATCH_SIZE[1]}; required",
    )
    start.add_argument(
        "--interval",
        type=typed_float,
        required=True,
        metavar="S",
        help=f"seconds from one batch's start to the next's, in {range_text(limits.ROLLOUT_INTERVAL_S, True)} "
        "(a week); required",
    )
    start.add_argument(
        "--mode",
        choices=("drain", "abrupt"),
        default="drain",
        help="drain each node before its restart, or drop its connections at once (default drain)",
    )
    start.add_argument(
        "--pause-cpu",
        type=typed_float,
        default=75.0,
        metavar="PCT",
        help="pause when a surviving node's CPU exceeds PCT %%, in (0, 100] (default 75)",
    )
    start.set_defaults(handler=_run_act, build=_rollout_start, request=RolloutRequest)
    for step, what in (("halt", "a running or paused"), ("resume", "a paused or halted")):
        steps.add_parser(
            step,
            parents=[common],
            help=f"{step} the rollout",
            description=f"{step.capitalize()} {what} rollout (POST /v1/rollout/{step}).",
            examples=(f"stormdeck act {EXAMPLE_URL} rollout {step}",),
        ).set_defaults(handler=_run_act, build=_rollout_step, request=ActionRequest)

    admission = actions.add_parser(
        "admission",
        parents=[common],
        help="set admission control (options left out keep their current settings)",
        description="Change admission control (PUT /v1/admission). An option left out keeps the fleet's "
        "current setting (GET /v1/fleet's `admission`, read just before sending; the settings sent are "
        "printed), so `--rate 100` changes the rate only; `unlimited` lifts a limit (--rate, --burst, "
        "--max-connections). --nodes changes only those nodes, starting from their own settings (the fleet's where they have none). A big "
        "change — a limit cut below half of what the fleet runs or raised above double, set where there was "
        "none, or lifted — is shown before → after and not sent without --yes (exit 3), as the console asks "
        "first; --dry-run is sent without it. Settings every node covered runs already are not sent: 'nothing to "
        "apply', exit 0 (as the console's form says; --dry-run judges them). An unknown --nodes id is bad input "
        "(exit 2), named with the fleet's ids.",
        examples=(
            f"stormdeck act {EXAMPLE_URL} admission --rate 100 --retry-after 5:60",
            f"stormdeck act {EXAMPLE_URL} admission --max-connections unlimited --nodes gw-001,gw-002",
        ),
    )
    kept = "default: the fleet's current setting"
    admission.add_argument(
        "--rate",
        metavar="R",
        help="new connections admitted per second per node (token bucket refill), in "
        f"{range_text(limits.ADMISSION_RATE_PER_S, True)}, or {UNLIMITED} ({kept})",
    )
    admission.add_argument(
        "--burst",
        metavar="N",
        help="token bucket depth per node: connections admitted at once, a whole number in "
        f"{range_text(limits.ADMISSION_BURST, True)}, or {UNLIMITED} ({kept})",
    )
    admission.add_argument(
        "--max-connections",
        metavar="N",
        help="connection ceiling per node, a whole number in "
        f"{range_text(limits.ADMISSION_MAX_CONNECTIONS, True)}, or {UNLIMITED} ({kept})",
    )
    low, high = (f"{bound:g}" for bound in limits.RETRY_AFTER_S)
    admission.add_argument(
        "--retry-after",
        metavar="MIN:MAX",
        help=f"window a refused client's Retry-After is drawn from, seconds: {low} ≤ MIN ≤ MAX ≤ {high}, "
        f"e.g. 5:60 ({kept})",
    )
    admission.add_argument(
        "--nodes",
        metavar="ID,ID",
        help="only these nodes, comma-separated, e.g. gw-001,gw-002 (default: the whole fleet)",
    )
    admission.set_defaults(
        handler=_run_act,
        build=_admission,
        request=AdmissionRequest,
        complete=_keep_current_admission,
        check_unchanged=_unchanged_admission,
        check_big=_big_admission_changes,
    )

    add_capacity = actions.add_parser(
        "add-capacity",
        parents=[common],
        help="provision more gateway nodes (ready after the fleet's provisioning time)",
        description="Add N nodes (--count N) to the fleet (POST /v1/capacity). They serve once provisioned (the "
        "outage seed's 200 nodes took 4 minutes): the verdict shows when, and the headroom then. An add "
        "larger than add_capacity_confirm_pct of the fleet asks for --yes; N below 1, or beyond the "
        "fleet's room or add_capacity_max_nodes, is refused naming the fleet's range (exit 2). More nodes than the console would pre-fill (those "
        "that bring headroom back to its budget once ready, at least one) is shown and not sent without "
        "--yes (exit 3), as the console asks first.",
        examples=(
            f"stormdeck act {EXAMPLE_URL} add-capacity --count 4 --dry-run",
            f"stormdeck act {EXAMPLE_URL} add-capacity --count 4",
        ),
    )
    add_capacity.add_argument(
        "--count",
        type=typed_int,
        required=True,
        metavar="N",
        help="nodes to add, a whole number from 1 to the fleet's room (GET /v1/capacity's max_nodes less the "
        f"nodes it has) and add_capacity_max_nodes, never above {MAX_ADD_NODES}; required",
    )
    add_capacity.set_defaults(
        handler=_run_act,
        build=_add_capacity,
        request=CapacityRequest,
        check_input=_count_below_one,
        check_big=_big_capacity_changes,
    )

    for command in (*actions.choices.values(), *steps.choices.values()):
        command.epilog = ACT_EXITS  # (`act URL drain --help` said no exit code; `act --help` did)

    plan = subparsers.add_parser("plan", help="plan an action: the largest safe drain of a node")
    plans = add_subcommands(plan, dest="plan", metavar="WHAT")
    plan_drain = plans.add_parser(
        "drain",
        help="the largest safe drain rate of NODE, from the server's planner",
        description="Ask the fleet API's planner (GET /v1/nodes/NODE/drain-plan) for the largest drain "
        "rate of NODE that the other nodes can absorb, with its duration, deadline and hint window, and "
        "print the `stormdeck act … drain` command that applies it. Nothing is changed. Exit 0 planned, "
        "2 bad input (e.g. an unknown node), 1 transport or auth error.",
        examples=(
            f"stormdeck plan drain {EXAMPLE_URL} gw-017",
            f"stormdeck plan drain {EXAMPLE_URL} gw-017 --json",
        ),
    )
    plan_drain.add_argument(
        "url",
        metavar="URL",
        # `plan drain gw-010` (the URL forgotten) said "required: NODE": the URL is what is missing.
        type=fleet_url_argument("plan drain", "NODE"),
        help="the fleet API, e.g. http://127.0.0.1:8470",
    )
    plan_drain.add_argument("node", metavar="NODE", help="the node to drain, e.g. gw-017")
    plan_drain.add_argument("--token-file", type=Path, metavar="FILE", help=TOKEN_FILE_HELP)
    plan_drain.add_argument("--json", action="store_true", help="print the server's plan as JSON")
    plan_drain.set_defaults(handler=_run_plan)

    audit = subparsers.add_parser("audit", help="the audit log of actions")
    audits = add_subcommands(audit, dest="audit", metavar="WHAT")
    verify = audits.add_parser(
        "verify",
        help="check an audit log's hash chain; exit 0 when intact",
        description="Check that every record of an audit log is chained to the one before it by its hash, "
        "so no record was changed, removed or inserted. Exit 0 when intact (prints the record count and the "
        "last hash), 1 naming the first broken line, 2 when FILE cannot be read.",
        examples=(
            "stormdeck audit verify ~/.local/state/stormdeck/audit/thundering-herd.jsonl   # the path audit: named",
        ),
    )
    verify.add_argument(
        "file",
        type=Path,
        metavar="FILE",
        help="the audit log (JSONL), e.g. the `audit:` path a server announced",
    )
    verify.set_defaults(handler=_run_verify)


# --- building requests ------------------------------------------------------------------------------------


def _window(text: str, option: str, kind: type) -> list[Any]:
    low, sep, high = text.partition(":")
    allowed = "MIN:MAX, two finite numbers with a colon, e.g. 1000:15000"
    try:
        if not sep:
            raise ValueError
        window = [kind(low), kind(high)]
    except ValueError:
        raise InputError(option, text, allowed) from None
    if not all(math.isfinite(value) for value in window):  # nan:inf parse as floats but are no JSON
        raise InputError(option, text, allowed)
    return window


def _controls(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {"dry_run": bool(args.dry_run)}
    if args.override_reason:
        body["override_reason"] = args.override_reason
    return body


def _drain(args: argparse.Namespace) -> tuple[str, str, dict[str, Any]]:
    body = {
        "rate_per_s": check_finite("--rate", args.rate),
        "deadline_s": check_finite("--deadline", args.deadline),
        "hint_ms": _window(args.hint, "--hint", int),
    }
    return (*route("drain", args.node), body | _controls(args))


def _undrain(args: argparse.Namespace) -> tuple[str, str, dict[str, Any]]:
    return (*route("undrain", args.node), _controls(args))


def _rollout_start(args: argparse.Namespace) -> tuple[str, str, dict[str, Any]]:
    body = {
        "batch_size": args.batch_size,
        "interval_s": check_finite("--interval", args.interval),
        "mode": args.mode,
        "pause_cpu_pct": check_finite("--pause-cpu", args.pause_cpu),
    }
    return (*route("rollout_start"), body | _controls(args))


def _rollout_step(args: argparse.Namespace) -> tuple[str, str, dict[str, Any]]:
    return (*route(f"rollout_{args.step}"), _controls(args))


UNLIMITED = "unlimited"


def _limit(text: str | None, option: str, kind: type, high: float) -> float | int | None:
    """A limit as typed: a number in (0, high] — the API's range — or `unlimited` (null: no limit). nan and
    inf are no JSON; a limit out of range is refused here, before the big-change check would offer to
    send it with --yes."""
    if text is None or text.strip().lower() == UNLIMITED:
        return None
    allowed = f"{'an integer' if kind is int else 'a finite number'} in {range_text((0, high), True)}, or {UNLIMITED}"
    try:
        value = kind(text)
    except ValueError:
        raise InputError(option, text, allowed) from None
    if not (math.isfinite(value) and 0 < value <= high):  # (said as typed: '0', not 0.0)
        raise InputError(option, text, allowed)
    return value


#: The fields of an admission request that its options set (the rest: `nodes` and the two-phase controls).
ADMISSION_FIELDS = ("rate_per_s", "burst", "max_connections", "retry_after_s")


def _admission(args: argparse.Namespace) -> tuple[str, str, dict[str, Any]]:
    """Only the options given: `_keep_current_admission` fills the others in before sending."""
    body: dict[str, Any] = {}
    if args.rate is not None:
        body["rate_per_s"] = _limit(args.rate, "--rate", float, limits.ADMISSION_RATE_PER_S[1])
    if args.burst is not None:
        body["burst"] = _limit(args.burst, "--burst", int, limits.ADMISSION_BURST[1])
    if args.max_connections is not None:
        body["max_connections"] = _limit(
            args.max_connections, "--max-connections", int, limits.ADMISSION_MAX_CONNECTIONS[1]
        )
    if args.retry_after is not None:
        body["retry_after_s"] = _window(args.retry_after, "--retry-after", float)
    if args.nodes:
        body["nodes"] = [node.strip() for node in args.nodes.split(",") if node.strip()]
    return (*route("admission"), body | _controls(args))


def _add_capacity(args: argparse.Namespace) -> tuple[str, str, dict[str, Any]]:
    return (*route("add_capacity"), {"count": args.count} | _controls(args))


# --- checking a request before it is sent ----------------------------------------------------------------

#: The option that sets each request field: the API names fields, the operator typed options.
OPTION_OF = {
    "rate_per_s": "--rate",
    "deadline_s": "--deadline",
    "hint_ms": "--hint",
    "batch_size": "--batch-size",
    "interval_s": "--interval",
    "mode": "--mode",
    "pause_cpu_pct": "--pause-cpu",
    "burst": "--burst",
    "max_connections": "--max-connections",
    "retry_after_s": "--retry-after",
    "nodes": "--nodes",
    "count": "--count",
    "override_reason": "--override-reason",
}


def options_of(model: type[BaseModel]) -> dict[str, str]:
    """The fields of `model` an option sets, and that option."""
    return {field: option for field, option in OPTION_OF.items() if field in model.model_fields}


def check_request(model: type[BaseModel], body: dict[str, Any], args: argparse.Namespace) -> None:
    """The request as the server will read it, checked here by its own model (the bounds of
    console.protocol's request models, and a window's MIN ≤ MAX by `limits.in_window`, as the guards
    judge it), so an option out of range is refused naming the option, the value as typed and its range,
    exit 2 — before anything is sent. It answered "cannot reach the fleet API" (exit 1) with no fleet
    running, and the API's field with one ("422 bad_input: rate_per_s: Input should be greater than 0")."""
    from pydantic import ValidationError

    try:
        request = model.model_validate(body)
    except ValidationError as error:
        first = error.errors()[0]
        field = str(first["loc"][0])
        raise _refused(model, field, body, args, fallback=str(first.get("msg", "a valid value"))) from None
    for field, info in model.model_fields.items():
        window = next((item for item in info.metadata if isinstance(item, Window)), None)
        value = getattr(request, field)
        if window is not None and value is not None and not limits.in_window(value, window.bounds):
            raise _refused(model, field, body, args)


def _refused(
    model: type[BaseModel], field: str, body: dict[str, Any], args: argparse.Namespace, fallback: str = ""
) -> InputError:
    """`field` refused, named by its option with the value as the operator typed it."""
    from console.server.problems import allowed_range

    option = OPTION_OF.get(field, field)
    typed = _typed(args, option)
    info = model.model_fields[field]
    window = next((item for item in info.metadata if isinstance(item, Window)), None)
    if window is not None:  # typed MIN:MAX, not the API's [min, max]
        low, high = (_bound(end) for end in window.bounds)
        allowed = f"MIN:MAX with {low} ≤ MIN ≤ MAX ≤ {high}"
    else:
        allowed = allowed_range(model, [field])
        longest = next((item.max_length for item in info.metadata if hasattr(item, "max_length")), None)
        if allowed and allowed[0] in "([":  # a range: of what
            whole = int in (info.annotation, *get_args(info.annotation))
            allowed = f"{'a whole number' if whole else 'a number'} in {allowed}"
        elif not allowed and longest is not None:  # ("a number in " had said nothing of a text's length)
            allowed = f"a text of at most {longest:,} characters"
    return InputError(option, body.get(field) if typed is None else typed, allowed or fallback)


def _typed(args: argparse.Namespace, option: str) -> object:
    """What the operator typed for `option` (its text: '0', not 0.0), None where it was not given."""
    return as_typed(getattr(args, option.removeprefix("--").replace("-", "_"), None))


def _bound(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# --- running ----------------------------------------------------------------------------------------------


def _run_act(args: argparse.Namespace) -> int:
    check_fleet_url(args.url)
    method, path, body = args.build(args)
    complete = getattr(args, "complete", None)
    check_input = getattr(args, "check_input", None)
    check_big = getattr(args, "check_big", None)
    check_unchanged = getattr(args, "check_unchanged", None)
    refused: InputError | None = None
    try:
        check_request(args.request, body, args)
    except InputError as error:
        if check_input is None:
            raise
        refused = error  # the fleet's own range says it better (add capacity's room), when it answers
    token = load_token(args.token_file)

    async def go() -> ActionAnswer | list[BigChange] | str:
        async with ActionClient(args.url, token) as client:
            if check_input is not None:  # bad input: refused here, --yes or --dry-run alike
                await _check_input(check_input, client, body, refused, args)
            if complete is not None:
                kept = await complete(client, body)
                if kept:  # stderr: --json keeps stdout one JSON document
                    print(kept, file=sys.stderr)
            if check_unchanged is not None and not args.dry_run:  # (a dry run judges them as they stand)
                same = await check_unchanged(client, body)
                if same is not None:
                    return same
            if check_big is not None and not args.yes and not args.dry_run:
                changes = await check_big(client, body)
                if changes:
                    return changes
            return await client.act(method, path, body, confirm=args.yes, typed=args.typed)

    answer = asyncio.run(go())
    if isinstance(answer, list):
        return _not_sent(answer, args.json)
    if isinstance(answer, str):
        return _unchanged_not_sent(answer, body, args.json)
    if args.json:
        print(json.dumps({"status": answer.status, **answer.body}, indent=2))
    else:
        print(render_answer(answer, options_of(args.request)))
    return EXIT[answer.reply]


async def _check_input(
    check: Any,
    client: ActionClient,
    body: dict[str, Any],
    refused: InputError | None,
    args: argparse.Namespace,
) -> None:
    """An action's check against the fleet (add capacity's count in the fleet's room), its refusal named
    by the option and the value as typed; when the request already failed its model's bounds, that refusal stands where the
    fleet cannot say more (no fleet answering: exit 2 all the same, not "cannot reach")."""
    from console.client.admin import FleetUnreachable

    try:
        await check(client, body)
    except InputError as error:
        option = OPTION_OF.get(error.field, error.field)
        typed = _typed(args, option)
        raise InputError(option, error.value if typed is None else typed, error.allowed) from None
    except FleetUnreachable:
        if refused is None:
            raise
    if refused is not None:
        raise refused


#: Exit status of a big change not sent for want of --yes: as a `confirm` verdict's (needs confirmation).
NOT_SENT_EXIT = EXIT[Reply.NEEDS_CONFIRMATION]


async def _big_admission_changes(client: ActionClient, body: dict[str, Any]) -> list[BigChange]:
    """The console's check before a big admission change (`console.model.big_changes`: a limit cut below
    half of what a node runs or raised above double, set where there was none or lifted), against what
    each node it covers runs, read now: `--nodes` changes against those nodes' own settings (a node's
    override, else the fleet's), a fleet-wide one against every node's."""
    from console.model.actions.form import ActionCall, Prefill
    from console.protocol import ActionKind, AdmissionInForce

    current = AdmissionInForce.of(await client.fleet())
    return big_changes(ActionCall(ActionKind.ADMISSION, None, body), current, Prefill({}, ""))


async def _capacity_prefill(client: ActionClient) -> Prefill | None:
    """The console's add-capacity pre-fill and its check of the fleet's room, from the fleet's capacity
    record and snapshot now, against the server's thresholds (GET /v1/thresholds; this CLI's own where
    the server does not say them, as the console's form does); None without a capacity record (the server
    judges it then: a read-only fleet answers 409 to the action itself)."""
    from dataclasses import fields

    from pydantic import ValidationError

    from console.client.admin import ApiError
    from console.guards import FleetCapacity
    from console.guards.config import load_default_thresholds
    from console.model.actions.capacity import add_capacity_prefill_of
    from console.model.actions.thresholds import own_thresholds, servers_thresholds
    from console.protocol import CapacityRecord

    try:
        record = CapacityRecord.model_validate(await client.capacity())
    except ApiError:
        return None
    capacity = FleetCapacity(**record.model_dump(include={f.name for f in fields(FleetCapacity)}))
    own = load_default_thresholds().thresholds
    try:
        lines = servers_thresholds(await client.thresholds(), own)
    except ApiError as error:
        lines = own_thresholds(own, error.status, str(error))
    except ValidationError:
        lines = own_thresholds(own, 0, "its GET /v1/thresholds did not read as thresholds")
    return lines.noted(add_capacity_prefill_of(await client.fleet(), capacity, lines.thresholds))


async def _count_below_one(client: ActionClient, body: dict[str, Any]) -> None:
    """A count below 1 fits no fleet: refused here in the fleet's range, by the check the console's form
    runs (`check_count`: "an integer in [1, 64] (room left in the fleet: 64 of 84 nodes)"), before
    --yes or --dry-run could make it look worth sending (the server's 422 says the same). A count beyond
    the room is the server's to refuse: its thresholds (`add_capacity_max_nodes`) are the ones that hold,
    and its refusal is audited."""
    if body["count"] >= 1:
        return
    prefill = await _capacity_prefill(client)
    if prefill is not None and prefill.check is not None:
        prefill.check(body)


async def _big_capacity_changes(client: ActionClient, body: dict[str, Any]) -> list[BigChange]:
    """More nodes than the console's pre-fill (the nodes that bring headroom back to the budget once ready,
    at least one), as the console checks before sending; nothing to check without a capacity record."""
    from console.model.actions.form import ActionCall
    from console.protocol import ActionKind

    suggested = await _capacity_prefill(client)
    if suggested is None:
        return []
    if suggested.check is not None:
        try:
            suggested.check(body)
        except InputError:
            # Beyond the fleet's room: bad input, not a big change — sent, and the server's 422 names
            # `count` and its range (exit 2); held back as big, --yes would only have led to that.
            return []
    return big_changes(ActionCall(ActionKind.ADD_CAPACITY, None, body), None, suggested)


async def _unchanged_admission(client: ActionClient, body: dict[str, Any]) -> str | None:
    """Why the admission change as completed would change nothing (`unchanged_admission`, the console's
    form's check: the fleet's settings already, or the named nodes'), read now; None where it changes
    something. Sent, it was applied and audited as a change (found in review)."""
    from console.model.actions.admission import unchanged_admission
    from console.protocol import AdmissionInForce

    snapshot = await client.fleet()
    return unchanged_admission(body, AdmissionInForce.of(snapshot) or AdmissionInForce(snapshot.admission))


def _unchanged_not_sent(message: str, body: dict[str, Any], as_json: bool) -> int:
    """A change that changes nothing, said and not sent: exit 0 (the fleet runs what was asked for), as
    the console's form says it in place of sending."""
    if as_json:
        print(json.dumps({"sent": False, "unchanged": True, "message": message}, indent=2))
        return 0
    settings = ", ".join(f"{name} {_kept_text(body[name])}" for name in ADMISSION_FIELDS)
    print(f"{message} ({settings}); nothing sent")
    return 0


def _not_sent(changes: list[BigChange], as_json: bool) -> int:
    if as_json:
        listed = [dataclasses.asdict(change) for change in changes]
        print(json.dumps({"sent": False, "big_changes": listed, "needs": "--yes"}, indent=2))
        return NOT_SENT_EXIT
    print("not sent: a big change, checked before it leaves (as the console asks):")
    for change in changes:
        print(f"  {change.label}: {change.before} → {change.after} ({change.why})")
    print("add --yes to send it (the server still judges it), or --dry-run to see its verdict")
    return NOT_SENT_EXIT


async def _keep_current_admission(client: ActionClient, body: dict[str, Any]) -> str | None:
    """Fill the admission fields the operator left out with the current settings, and say which: the
    fleet's for a fleet-wide change, the named nodes' own for one with `--nodes` (a node's override, else
    the fleet's) — from the fleet's, `--nodes gw-001 --max-connections 300` put gw-001's own 5/s back to
    the fleet's 500/s (found in review). Nodes named together that run different values of a field left
    out are refused naming its option: no one value keeps them all.

    `PUT /v1/admission` replaces every field (both backends, like the console's form, which pre-fills the
    current settings): the CLI sent null for an option left out, so `--rate 100` silently lifted the burst
    and put Retry-After back to 1:30 (found in review). Read here, just before sending: the verdict
    judges, and a confirmation binds, the settings as sent."""
    from console.guards.fleet import find_nodes
    from console.protocol import AdmissionInForce

    missing = [name for name in ADMISSION_FIELDS if name not in body]
    nodes: list[str] | None = body.get("nodes")
    if not missing and nodes is None:
        return None
    snapshot = await client.fleet()
    if nodes is not None:
        # Before anything is read for them: `--nodes zz` was "kept as zz has them" (the fleet's settings,
        # for a node that is not there) and a big change asking --yes. The guard's own refusal, which the
        # server answers with (every unknown id, the fleet's ids, the nearest), named by the option.
        try:
            find_nodes(snapshot, nodes)
        except InputError as error:
            raise InputError(OPTION_OF[error.field], error.value, error.allowed) from None
    if not missing:
        return None
    in_force = AdmissionInForce.of(snapshot) or AdmissionInForce(snapshot.admission)
    running = [in_force.for_node(n) for n in nodes] if nodes else [snapshot.admission]
    kept = []
    for name in missing:
        values = {
            node_id: settings.model_dump(mode="json")[name]
            for node_id, settings in zip(nodes or ["fleet"], running, strict=True)
        }
        said = {_kept_text(value): node_id for node_id, value in values.items()}
        if len(said) > 1:
            differ = ", ".join(f"{text} on {node_id}" for text, node_id in said.items())
            raise MissingInput(
                OPTION_OF[name],
                f"the nodes named run different values of it ({differ}): give one for them all",
            )
        value = body[name] = next(iter(values.values()))
        kept.append(f"{name} {_kept_text(value)}")
    whose = (
        "the fleet has them"
        if not nodes
        else f"{nodes[0]} has them"
        if len(nodes) == 1
        else "the nodes named have them"
    )
    return f"kept as {whose}: " + ", ".join(kept)


def _kept_text(value: Any) -> str:
    if value is None:
        return UNLIMITED
    if isinstance(value, list):
        return f"{value[0]:g}:{value[1]:g}"
    return f"{value:g}"


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


def _run_verify(args: argparse.Namespace) -> int:
    from console.audit import verify_file

    report = verify_file(args.file)
    if report.intact:
        print(f"{args.file}: intact, {report.records} records, last hash {report.last_hash[:16]}…")
        return 0
    print(
        f"{args.file}: line {report.broken_line}: {report.reason} ({report.records} records verified before it)",
        file=sys.stderr,
    )
    return 1


# --- showing a verdict ------------------------------------------------------------------------------------


def render_answer(answer: ActionAnswer, options: Mapping[str, str] | None = None) -> str:
    """The server's answer as text. The verdict is read as the console reads it (`read_answer`) and its
    values and limits written by the console's own functions (`format_value`, `limit_text`: a limit in
    words without ≤ / ≥), so the CLI's table and the console's dialog say a check the same way. `options`:
    the option that set each request field, named with the field the server refuses ("--rate
    (rate_per_s): …"; it named only the API's field)."""
    lines: list[str] = []
    body = answer.body
    headline = body.get("message") or body.get("detail") or ""
    if answer.reply is Reply.BAD_INPUT:
        for field, option in (options or {}).items():
            headline = re.sub(rf"(?<![\w-]){re.escape(field)}:", f"{option} ({field}):", headline)
    # The reply's word once: "200 dry_run: dry run: blocked; …" and "202 applied: drain gw-003 (…): applied"
    # said it twice; a headline that does not say it ("422 bad_input: …") keeps the label.
    said = answer.reply.value.replace("_", " ") in headline.lower()
    lines.append(
        f"{answer.status} {headline}" if said else f"{answer.status} {answer.reply.value}: {headline}"
    )
    verdict = read_answer(answer).verdict
    if verdict is not None:
        lines.append(f"verdict: {verdict.level.value}  ({verdict.action})")
        rows = [("check", "value", "limit", "", "why")]
        for check in verdict.checks:
            mark = check_mark(check)
            if mark == "FAIL" and check.level is not None:  # no colour here: the level in words
                mark = f"FAIL ({check.level.value})"
            rows.append((check.name, format_value(check.value), limit_text(check), mark, check.why))
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        for row in rows:
            lines.append("  " + "  ".join(row[i].ljust(widths[i]) for i in range(4)) + "  " + row[4])
        if verdict.projections:
            lines.append(
                "projections: " + ", ".join(f"{k}={format_value(v)}" for k, v in verdict.projections.items())
            )
        forecast = verdict.forecast
        if forecast:
            lines.append(
                f"forecast ({forecast['horizon_s']} s ahead, tick {forecast['tick_ms']:g} ms, "
                f"{forecast['compute_ms']:.0f} ms to compute):"
            )
            for label, key in (("without", "without_action"), ("with", "with_action")):
                run = forecast[key]
                lines.append(
                    f"  {label:<8} connections min {run['connections_min']:,} end {run['connections_end']:,}  "
                    f"max CPU {run['cpu_max_pct']:.0f} %  attempts/s peak {run['attempts_per_s_peak']:,.0f}"
                )
        # As the console's dialog says it: the operator's next command is to type what would pass.
        hints = (
            what_would_pass(verdict) if verdict.level in (VerdictLevel.TYPED, VerdictLevel.BLOCKED) else []
        )
        if hints:
            lines.append("what would pass: " + "; ".join(hints))
    if answer.reply is Reply.NEEDS_CONFIRMATION:
        if answer.level == "typed":
            expected = (verdict.typed_expected if verdict else None) or ""
            lines.append(f"needs typed confirmation: repeat with --typed {expected}")
        else:
            lines.append("needs confirmation: repeat with --yes")
    return "\n".join(lines)
