"""The server's answer to an action as text: its verdict's checks, projections and forecast, and what
would pass, in the words the console's dialog uses."""

from __future__ import annotations

import re
from collections.abc import Mapping

from console.client.actions import ActionAnswer, Reply
from console.model.actions.answer import (
    check_mark,
    confirmation_asked,
    confirmation_refused,
    format_value,
    limit_text,
    read_answer,
    what_would_pass,
)
from console.protocol import VerdictLevel

#: The label of the fleet's own refusal (problem type `refused-by-fleet`), as the audit log says it.
FLEET_REFUSED = "refused_by_fleet"


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
    elif answer.reply is Reply.NEEDS_CONFIRMATION:
        # The API's next step ("repeat the call with confirm.token") is no CLI user's: the last line says
        # the options that answer the verdict (review).
        if answer.problem_type == "confirm-refused":
            headline = (
                f"the server refused the confirmation — {confirmation_refused(headline)}; nothing applied"
            )
        else:
            headline = confirmation_asked(headline)
    # The reply's word once: "200 dry_run: dry run: blocked; …" and "202 applied: drain gw-003 (…): applied"
    # said it twice; a headline that does not say it ("422 bad_input: …") keeps the label.
    # ("needs typed confirmation" says it too.)
    # The fleet's own refusal (a node down) is no input typed wrong: "422 bad_input: node: 'n3' …" said it
    # was (review). Its exit status stays bad input's, 2: nothing was applied and the call must change.
    label = FLEET_REFUSED if answer.problem_type == "refused-by-fleet" else answer.reply.value
    word = "confirmation" if answer.reply is Reply.NEEDS_CONFIRMATION else label.replace("_", " ")
    said = word in headline.lower()
    lines.append(f"{answer.status} {headline}" if said else f"{answer.status} {label}: {headline}")
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
    answering = body.get("nodes_answering")
    if isinstance(answering, list) and answering:  # admission refused for nodes that do not answer
        lines.append(f"to set the answering nodes: run again with --nodes {','.join(map(str, answering))}")
    if answer.reply is Reply.NEEDS_CONFIRMATION:  # (`--typed NAME` answers a confirm verdict too)
        if answer.level == "typed":
            expected = (verdict.typed_expected if verdict else None) or "NAME"
            lines.append(f"needs typed confirmation: run again with --typed {expected}")
        else:
            lines.append("needs confirmation: run again with --yes")
    return "\n".join(lines)
