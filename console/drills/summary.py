"""The end of a drill as the trainee reads it: each objective's figure, and what to do next. Pure.

The end screen (`console.ui.drill`) and the terminal (`stormdeck drill`, headless or after the console)
say the same: an objective's figure only where it informs — the measure against what was allowed, in the
operator's words — then what became of it on the drill's clock (the drill screen's status, final:
`console.drills.countdown`), and the exact commands that show this run's report, replay it and try the
drill again (or, not recorded, how to record the next run).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from console.drills.live import LiveObjective
from console.drills.objectives import Measured, Score
from console.model.units import duration
from console.record.records import DrillOutcome


def verdict_figure(item: Measured) -> str | None:
    """The figure `item` was met or failed on, against its allowance ("halted 2 min 10 s after the abort
    criterion, allowed 1 min 30 s"); None where it would add nothing: a yes or no (`no_override`), a count
    the status already gives against what was needed (`action_used`), a total or a dip whose status states
    its time over the line and what was allowed (`totals_max`, `recovery`), a halt in time, whose status
    states its delay ("halted 04:03:20, 39 s after the abort criterion …"), or a measure with nothing
    measured (never halted)."""
    value, limit = item.value, item.limit
    if value is None or limit is None:
        return None
    if item.kind == "connections_floor":
        return f"lowest {value:.3g} %, floor {limit:g} %"
    if item.kind == "halt_within" and not item.met:
        return f"halted {duration(value)} after the abort criterion, allowed {duration(limit)}"
    if item.kind == "rollout_completed":
        return f"completed after {duration(value)}, allowed {duration(limit)}"
    return None


def end_lines(item: LiveObjective) -> list[str]:
    """What the end screen and the terminal say under an objective: the figure it turned on where that
    informs (`verdict_figure`), then what became of it on the drill's clock (`item.status`, once the drill
    is over: "abort criterion 04:02:41 (gw-024): not halted by 04:04:11"), unless that only repeats its
    name ("none used" under "no admin override used")."""
    measured = item.measured
    if measured.kind == "connections_floor" and item.status and measured.limit is not None:
        # One line: the status names the lowest and when; a figure line beside it said the lowest again,
        # rounded otherwise ("lowest 92 %, floor 93 %" over "fell to 92.0 % (04:09:31)").
        return [f"{item.status}; floor {measured.limit:g} %"]
    figure = verdict_figure(measured)
    repeats = measured.kind == "no_override" and measured.met
    return [line for line in (figure, None if repeats else item.status) if line]


def said_at_end(objectives: Sequence[LiveObjective]) -> list[str | None]:
    """Each objective as the end screen says it (`end_lines`), in one line: what a recording keeps of it
    (`Score.outcome`) for the report to show on the drill's clock too; None where it says nothing more."""
    return ["; ".join(end_lines(item)) or None for item in objectives]


def outcome_at_end(score: Score, time_s: float, objectives: Sequence[LiveObjective]) -> DrillOutcome:
    """The drill's outcome as a recording keeps it: each objective in the end screen's words
    (`said_at_end`) and with its standing, so the report reads "not needed" where the end screen did."""
    return score.outcome(time_s, said_at_end(objectives), [item.standing.value for item in objectives])


@dataclass(frozen=True)
class RunCommand:
    """How this run of a drill was started, as far as the next run repeats it: the drill as the trainee
    named it (a packaged name or a path) and the options that make it the same exercise."""

    drill: str
    seed: int | None = None
    sets: tuple[str, ...] = ()
    speed: float | None = None
    record: str | None = None  # the recording this run wrote, if any
    headless: bool = False
    actions: str | None = None  # a headless run's script

    def console(self, record: str | None = None) -> str:
        """`stormdeck drill NAME …` at the console. A headless --speed is not carried: the console's
        clock has a limit (100×) that a headless run has not."""
        speed = None if self.headless else self.speed
        return _command(self.drill, self._shaping(speed), record)

    def again(self, record: str | None = None) -> str:
        """This run's own command again (headless stays headless, with its script)."""
        if not self.headless:
            return self.console(record)
        script = ["--actions", self.actions] if self.actions is not None else []
        return _command(self.drill, ["--headless", *script, *self._shaping(self.speed)], record)

    def _shaping(self, speed: float | None) -> list[str]:
        words = ["--seed", str(self.seed)] if self.seed is not None else []
        for override in self.sets:
            words += ["--set", override]
        return words + (["--speed", f"{speed:g}"] if speed is not None else [])


def _command(drill: str, options: list[str], record: str | None) -> str:
    recorded = ["--record", record] if record is not None else []
    return shlex.join(["stormdeck", "drill", drill, *options, *recorded])


@dataclass(frozen=True)
class NextStep:
    what: str  # in the trainee's words: "see the report"
    command: str  # the exact command line, quoted for a POSIX shell
    note: str = ""  # a line under it, where the command needs a word of why


def next_steps(run: RunCommand, fresh_recording: str) -> list[NextStep]:
    """What the trainee can do once the drill is over. `fresh_recording`: a path the next run may record to
    without continuing another recording (given again, a recording is continued, not replaced)."""
    retry = "try it yourself" if run.headless else "try it again"
    if run.record is not None:
        return [
            NextStep("see the report", shlex.join(["stormdeck", "report", run.record])),
            NextStep("replay it", shlex.join(["stormdeck", "replay", run.record])),
            NextStep(retry, run.console(fresh_recording)),  # recorded as this one was, beside it
        ]
    note = "this run was not recorded; stormdeck report and stormdeck replay read a recording"
    return [
        NextStep(retry, run.console()),
        NextStep("record the next run", run.again(fresh_recording), note),
    ]


#: The column the commands start in, whichever steps there are: the longest `what`, and room after it.
WHAT_WIDTH = len("record the next run") + 2


def next_steps_text(steps: list[NextStep]) -> list[str]:
    """The steps as lines of plain text, their commands in one column."""
    lines = ["next:"]
    for step in steps:
        lines.append(f"  {step.what:<{WHAT_WIDTH}}{step.command}")
        if step.note:
            lines.append(f"  {'':<{WHAT_WIDTH}}({step.note})")
    return lines
