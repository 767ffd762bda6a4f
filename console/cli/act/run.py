"""Sending an action: its request built and checked, the fleet's checks run, the answer printed, and the
exit code (0 applied or nothing to apply, 3 needs confirmation or a big change not sent, 4 blocked, 2 bad
input, 1 transport or auth)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from typing import Any

from console.cli.act.answer import render_answer
from console.cli.act.request import ADMISSION_FIELDS, OPTION_OF, _typed, check_request, options_of
from console.cli.checks import check_fleet_url
from console.client.actions import ActionAnswer, ActionClient, Reply
from console.client.token import load_token
from console.errors import InputError
from console.model.actions.admission import kept_text
from console.model.big_changes import BigChange

EXIT = {
    Reply.APPLIED: 0,
    Reply.DRY_RUN: 0,
    Reply.NEEDS_CONFIRMATION: 3,
    Reply.BLOCKED: 4,
    Reply.BAD_INPUT: 2,
    Reply.DENIED: 1,
}


def _run_act(args: argparse.Namespace) -> int:
    check_fleet_url(args.url)
    method, path, body = args.build(args)
    complete = getattr(args, "complete", None)
    check_input = getattr(args, "check_input", None)
    check_big = getattr(args, "check_big", None)
    check_unchanged = getattr(args, "check_unchanged", None)
    check_already = getattr(args, "check_already", None)
    refused: InputError | None = None
    try:
        check_request(args.request, body, args)
    except InputError as error:
        if check_input is None:
            raise
        refused = error  # the fleet's own range says it better (add capacity's room), when it answers
    token = load_token(args.token_file)

    async def go() -> ActionAnswer | list[BigChange] | str | NothingToDo:
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
            answer = await client.act(method, path, body, confirm=args.yes, typed=args.typed)
            if (
                check_already is not None
                and answer.reply is Reply.BAD_INPUT
                and answer.body.get("field") == "rollout"
            ):
                already = await check_already(client)
                if already is not None:
                    return NothingToDo(answer, already)
            return answer

    answer = asyncio.run(go())
    if isinstance(answer, list):
        return _not_sent(answer, args.json)
    if isinstance(answer, str):
        return _unchanged_not_sent(answer, body, args.json)
    if isinstance(answer, NothingToDo):
        return answer.said(args.json)
    if args.json:
        print(json.dumps({"status": answer.status, **answer.body}, indent=2))
    else:
        print(render_answer(answer, options_of(args.request)))
    return EXIT[answer.reply]


@dataclasses.dataclass(frozen=True)
class NothingToDo:
    """The server refused a halt or resume with nothing to act on, and the rollout is already as asked
    (halted; running): nothing to apply, exit 0, as docs/actions.md's exit codes say, in one line."""

    answer: ActionAnswer
    message: str

    def said(self, as_json: bool) -> int:
        if as_json:  # the server's answer as it came, and what the CLI made of it
            print(
                json.dumps(
                    {
                        "status": self.answer.status,
                        **self.answer.body,
                        "nothing_to_do": True,
                        "message": self.message,
                    },
                    indent=2,
                )
            )
        else:
            print(self.message)
        return 0


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


def _unchanged_not_sent(message: str, body: dict[str, Any], as_json: bool) -> int:
    """A change that changes nothing, said and not sent: exit 0 (the fleet runs what was asked for), as
    the console's form says it in place of sending."""
    if as_json:
        print(json.dumps({"sent": False, "unchanged": True, "message": message}, indent=2))
        return 0
    settings = ", ".join(f"{name} {kept_text(body[name])}" for name in ADMISSION_FIELDS)
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
