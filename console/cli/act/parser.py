"""The options of `stormdeck act URL ACTION …`, `plan drain` and `audit verify`, and what runs each."""

from __future__ import annotations

import argparse
import functools
import re
from pathlib import Path
from typing import NoReturn

from console.cli.act.audit import _run_verify
from console.cli.act.fleet_checks import (
    _big_admission_changes,
    _big_capacity_changes,
    _count_below_one,
    _keep_current_admission,
    _rollout_there_already,
    _unchanged_admission,
)
from console.cli.act.plan import _run_plan
from console.cli.act.request import (
    UNLIMITED,
    _add_capacity,
    _admission,
    _drain,
    _rollout_start,
    _rollout_step,
    _undrain,
    option_allowed,
)
from console.cli.act.run import _run_act
from console.cli.checks import fleet_url_argument, range_text, typed_float, typed_int
from console.cli.groups import CommandParser, add_subcommands
from console.protocol import MAX_ADD_NODES, ActionRequest, limits
from console.protocol.requests import AdmissionRequest, CapacityRequest, DrainRequest, RolloutRequest

#: The fleet API's address in the examples of --help (`stormdeck sim serve`'s default).
EXAMPLE_URL = "http://127.0.0.1:8470"
TOKEN_FILE_HELP = "the token file (default: the environment's STORMDECK_TOKEN)"
#: What every action exits with (README: "Exit codes"), in each action's --help as in `act --help`.
ACT_EXITS = (
    "Exit 0 applied (or dry run shown, or nothing to apply: not sent or already as asked), 3 needs confirmation (or a big change not sent), 4 blocked, 2 bad "
    "input (an option out of its range, named, before anything is sent; a missing token), 1 transport or "
    "auth (a token the fleet refuses), or a URL that answers but is not a stormdeck fleet API."
)
#: The request models' bound on an override reason (characters), as --help says it.
OVERRIDE_REASON_CHARS = next(
    rule.max_length
    for rule in ActionRequest.model_fields["override_reason"].metadata
    if hasattr(rule, "max_length")
)


class _ActionParser(CommandParser):
    """argparse reads `--hint -5:10` as two options and says only "expected one argument": say how to
    pass a value that starts with '-' (the server then names the range, e.g. of hint_ms). A word for a
    number is refused in the words of a number out of range: the request model's range, not --help's."""

    def number_allowed(self, action: argparse.Action) -> str:
        model = self._defaults.get("request")
        said = option_allowed(model, action.option_strings[-1]) if model is not None else ""
        return said or super().number_allowed(action)

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
            f"stormdeck act {EXAMPLE_URL} rollout start --batch-size 2 --interval 600 --drain-rate 50 --dry-run",
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
    start.add_argument(
        "--drain-rate",
        type=typed_float,
        metavar="N",
        help=f"closes per second per node of a drain-mode batch, in {range_text(limits.DRAIN_RATE_PER_S, True)} "
        "(default: the fleet's own rate, GET /v1/capacity's batch_drain_rate_per_s)",
    )
    start.set_defaults(handler=_run_act, build=_rollout_start, request=RolloutRequest)
    for step, what, already in (
        ("halt", "a running or paused", "halted"),
        ("resume", "a paused or halted", "running (or scheduled)"),
    ):
        steps.add_parser(
            step,
            parents=[common],
            help=f"{step} the rollout",
            description=f"{step.capitalize()} {what} rollout (POST /v1/rollout/{step}). A rollout {already} "
            "already has nothing to do: said in one line, exit 0.",
            examples=(f"stormdeck act {EXAMPLE_URL} rollout {step}",),
        ).set_defaults(
            handler=_run_act,
            build=_rollout_step,
            request=ActionRequest,
            check_already=functools.partial(_rollout_there_already, step=step),
        )

    admission = actions.add_parser(
        "admission",
        parents=[common],
        help="set admission control (options left out keep their current settings)",
        description="Change admission control (PUT /v1/admission). An option left out keeps what every "
        "node covered runs (GET /v1/fleet, read just before sending; the settings kept are printed), so "
        "`--rate 100` changes the rate only; where those nodes run different values of it (a per-node "
        "setting), it must be given (exit 2). `unlimited` lifts a limit (--rate, --burst, "
        "--max-connections). --nodes changes only those nodes, starting from their own settings (the fleet's "
        "where they have none); nodes that do not answer their admin API are refused whole, and the nodes "
        "that do are named (`run again with --nodes …`). A big "
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
    kept = "default: what the nodes covered run now"
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
