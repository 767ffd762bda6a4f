"""`stormdeck act URL …`, `stormdeck plan drain URL NODE`, `stormdeck audit verify FILE` (issue #4, §5).

Exit codes: 0 applied (or dry run shown, or nothing to apply), 3 needs confirmation (or a big change not sent), 4 blocked, 2 bad
input, 1 transport or auth error. `--yes` confirms a `confirm` verdict and a big change (checked
here, as the console does, with `console.model.big_changes`); `--typed NAME` answers a `typed` one (and a
`confirm`).

The command is split by concern: `parser` (the options of every action, `register`), `request` (the
request each action sends, checked by its model), `fleet_checks` (what is read from the fleet before
sending: settings kept, big changes, the fleet's room), `run` (sending, exit codes), `answer` (a verdict
as text), `plan` (`plan drain`), `audit` (`audit verify`).
"""

from __future__ import annotations

from console.cli.act.answer import render_answer
from console.cli.act.parser import register
from console.cli.act.plan import render_plan
from console.cli.act.run import EXIT

__all__ = ["EXIT", "register", "render_answer", "render_plan"]
