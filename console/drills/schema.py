"""Drills: TOML files (package data next to this module), validated into typed, frozen records.

A drill is a scenario (plus overrides), a timeline of injected events at human times, a briefing,
measured objectives, hints after delays and a scoring rule (issue #5, section 1). The schema is documented
in docs/drills.md; keep the two together. Every error names the field, the value and what is allowed
(`InputError`, exit status 2).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from console.drills import LIST_WORD
from console.errors import InputError, MissingInput
from console.model.units import time_of_day
from console.packaged import list_packaged, read_packaged
from console.protocol import (
    ActionRequest,
    AdmissionRequest,
    CapacityRequest,
    DrainRequest,
    Event,
    Frame,
    RolloutRequest,
    ServedDrill,
    ServedObjective,
)
from console.sim.injection import check_event
from console.sim.scenario_overrides import Override

_DRILL_PACKAGE = "console.drills"

#: What each objective kind measures, and its parameters with their defaults (None: required).
OBJECTIVE_KINDS: dict[str, dict[str, Any]] = {
    # connections never fall below `min_pct` of the connections held at the start
    "connections_floor": {"min_pct": None},
    # after the first dip below `pct`, connections are back at or above it within `within_s`
    "recovery": {"pct": 95.0, "within_s": None},
    # the abort criterion (a serving node above `cpu_pct` for `for_s` in a row; outage seed's runbook fix)
    # is answered by an applied rollout halt within `within_s`
    "halt_within": {"cpu_pct": 80.0, "for_s": 30.0, "within_s": 90.0},
    # no admin override of a blocked action was applied
    "no_override": {},
    # a fleet total (a Totals field) stays at or below `max`, allowing `grace_s` seconds above it
    "totals_max": {"field": None, "max": None, "grace_s": 0.0},
    # a fleet total stays at or above `min`, allowing `grace_s` seconds under it (headroom back to the
    # outage seed's 35 % budget: what added capacity restores, and a halt alone does not)
    "totals_min": {"field": None, "min": None, "grace_s": 0.0},
    # the operator applied `action` at least `min_count` times, with request fields matching `where`, by
    # fleet time `by_s` when one is given (an action that only counts in time: admission before a return)
    "action_used": {"action": None, "min_count": 1, "where": {}, "by_s": math.inf},
    # the rollout reached `completed` within `within_s` of the drill's start
    "rollout_completed": {"within_s": None},
}

TOTALS_FIELDS = (
    "connections",
    "attempts_per_s",
    "rejects_per_s",
    "timeouts_per_s",
    "drops_per_s",
    "disconnects_per_s",
    "offline_clients",
    "full_resyncs_per_s",
    "resync_failures_per_s",
    "resync_backlog",
    "abnormal_closes_per_s",
    "max_cpu_pct",
    "headroom_pct",
)
#: The kinds that hold a fleet total to a line, and the parameter that names it.
TOTALS_KINDS = {"totals_max": "max", "totals_min": "min"}
#: Each of those totals in the operator's words (what `totals_max` says of it: "timeouts above 2,000/s"),
#: not the protocol's field name: the end screen once read "timeouts_per_s peaked at 91,702/s".
TOTALS_WORDS = {
    "connections": "connections",
    "attempts_per_s": "attempts",
    "rejects_per_s": "503s",
    "timeouts_per_s": "timeouts",
    "drops_per_s": "drops",
    "disconnects_per_s": "disconnects",
    "offline_clients": "clients offline",
    "full_resyncs_per_s": "full resyncs",
    "resync_failures_per_s": "resync failures",
    "resync_backlog": "resync backlog",
    "abnormal_closes_per_s": "abnormal closes (1006)",
    "max_cpu_pct": "hottest node's CPU",
    "headroom_pct": "headroom",
}
ACTION_NAMES = (
    "drain",
    "undrain",
    "rollout_start",
    "rollout_halt",
    "rollout_resume",
    "admission",
    "add_capacity",
)

#: The request body each operator action sends (docs/actions.md).
ACTION_BODIES = {
    "drain": DrainRequest,
    "undrain": ActionRequest,
    "rollout_start": RolloutRequest,
    "rollout_halt": ActionRequest,
    "rollout_resume": ActionRequest,
    "admission": AdmissionRequest,
    "add_capacity": CapacityRequest,
}

_TOP_KEYS = {
    "name": None,
    "title": None,
    "seed_source": None,
    "teaches": "",
    "scenario": None,
    "overrides": {},
    "keep_scenario_events": False,
    "clock_start": "00:00",
    "duration_s": None,
    "briefing": None,
    "timeline": [],
    "hints": [],
    "objectives": None,
    "scoring": {},
}
_SCORING_KEYS = {"penalty_per_min": 0.0, "penalty_below_pct": 95.0, "max_penalty": 0.0}
#: A hint's text, at most: the drill screen shows the newest whole on a line of its own above the footer, two
#: rows at 80 columns beside its time ("hint 04:03:10 · ") — socketio-lockstep's 151 took three, and the
#: alarms lost a row (tests/ui/test_drill_layout.py).
HINT_TEXT_MAX = 120
#: In a hint's text, counted from the fleet as the hint is told (`Hint.said`): a count written into the file
#: goes stale — thundering-herd's "Three nodes carry more than their share" was told with 42 serving nodes
#: over 80 % CPU (trainee reviewer).
COUNTED_HOT = re.compile(r"\{serving nodes over (\d+(?:\.\d+)?) % CPU\}")
#: Judged for length as told on the largest fleet a drill runs (`HINT_TEXT_MAX`).
_WIDEST_COUNT = "9999"
#: A hint comes at least this long before the deadline of each objective it serves: the trainee reads it,
#: opens the action's form from the palette and answers the guard's confirmation. (The seeds' fix script
#: spaces its three actions 5 s apart; a person who first has to read a hint needs more.)
HINT_LEAD_S = 20.0
#: The objective kinds an action earns on its own: a hint whose `unless_done` is that action serves it.
_EARNED_BY = {"halt_within": "rollout_halt"}
_HUMAN_TIME = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")


@dataclass(frozen=True)
class TimelineEntry:
    at_s: float  # fleet seconds after the drill starts
    say: str  # what a trainee is told happens ("04:00 maintenance window opens")
    action: str | None  # an injection (console.sim.scenario.EVENT_ACTIONS), or None for a marker
    params: dict[str, Any] = field(default_factory=dict)
    path: str = ""  # where the file wrote it ("timeline.2"), for errors found against the fleet


@dataclass(frozen=True)
class Hint:
    after_s: float
    text: str
    #: An action (ACTION_NAMES) that makes the hint moot: not told when applied before `after_s`.
    unless_done: str | None = None
    #: The objectives (indices into `Drill.objectives`) acting on the hint helps earn: it must come
    #: `HINT_LEAD_S` before each one's deadline (`serves` in the file, and what `unless_done` earns).
    serves: tuple[int, ...] = ()

    def said(self, frame: Frame | None) -> str:
        """The text as told with `frame` the fleet's newest: each `{serving nodes over N % CPU}` counted
        from it ("42 serving nodes over 80 % CPU"; `counted_hot`); without a frame, named only."""
        return COUNTED_HOT.sub(lambda m: counted_hot(frame, float(m.group(1)), m.group(1)), self.text)

    def moot(self, first_done: Mapping[str, float]) -> bool:
        """Whether the trainee already did what the hint suggests (first_done: action → first fleet time
        it was applied)."""
        return self.unless_done is not None and first_done.get(self.unless_done, math.inf) <= self.after_s


@dataclass(frozen=True)
class Objective:
    name: str
    kind: str
    points: float
    params: dict[str, Any]


@dataclass(frozen=True)
class Scoring:
    penalty_per_min: float  # points lost per fleet minute with connections below `penalty_below_pct`
    penalty_below_pct: float
    max_penalty: float  # 0: uncapped

    @property
    def capped_penalty(self) -> float:
        return self.max_penalty if self.max_penalty > 0 else float("inf")


@dataclass(frozen=True)
class Drill:
    name: str
    title: str
    seed_source: str
    teaches: str
    scenario: str
    overrides: dict[str, Any]
    keep_scenario_events: bool
    clock_start_s: int  # seconds after midnight that fleet second 0 shows as
    duration_s: float | None
    briefing: str
    timeline: tuple[TimelineEntry, ...]
    hints: tuple[Hint, ...]
    objectives: tuple[Objective, ...]
    scoring: Scoring

    @property
    def max_points(self) -> float:
        return sum(objective.points for objective in self.objectives)

    def served(self, duration_s: float, ended: Event | None = None) -> ServedDrill:
        """The drill as a served drill's hello names it (`duration_s`: its own, else its scenario's): the
        briefing's content, its clock and its objectives' points; `ended`: its end event, once told."""
        return ServedDrill(
            name=self.name,
            title=self.title,
            clock_start_s=self.clock_start_s,
            duration_s=duration_s,
            seed_source=self.seed_source,
            teaches=self.teaches,
            briefing=self.briefing,
            objectives=[ServedObjective(name=o.name, points=o.points) for o in self.objectives],
            ended=ended,
        )

    def human_time(self, at_s: float) -> str:
        """Fleet seconds as the drill's wall clock ("04:11:30")."""
        return time_of_day(self.clock_start_s + at_s)

    def scenario_overrides(self) -> list[Override]:
        """The overrides for `load_scenario`, as values (not `KEY=VALUE` text: an error would name `--set`,
        which the user never typed), each naming where the drill file holds it."""
        overrides = [Override(key, value, override_field(key)) for key, value in self.overrides.items()]
        if self.duration_s is not None:
            overrides.append(Override("duration_s", self.duration_s, "duration_s"))
        return overrides


def override_field(key: str) -> str:
    """Where a drill file holds the override of scenario `key`, as its other errors name paths:
    `overrides.nodes.count`; a key that is no dotted name is quoted, as TOML would: `overrides.""`."""
    return f"overrides.{key}" if re.fullmatch(r"[\w-]+(\.[\w-]+)*", key) else f"overrides.{json.dumps(key)}"


def hints_due(drill: Drill, time_s: float, first_done: Mapping[str, float] | None = None) -> list[Hint]:
    """The hints a trainee sees by fleet second `time_s`: those due, less those made moot by an action
    applied before they fell due (first_done: action → first fleet time it was applied; pure)."""
    done = first_done or {}
    return [hint for hint in drill.hints if hint.after_s <= time_s and not hint.moot(done)]


# --- loading ----------------------------------------------------------------------------------------


def list_drills() -> list[tuple[str, str]]:
    """(name, title) of every packaged drill, sorted by name."""
    return list_packaged(_DRILL_PACKAGE)


def load_drill(name_or_path: str) -> Drill:
    """A packaged drill by name, or a TOML file by path, validated (raises `InputError`)."""
    return build_drill(read_packaged("drill", _DRILL_PACKAGE, name_or_path))


def build_drill(data: dict[str, Any]) -> Drill:
    _known_keys("", data, _TOP_KEYS)
    required = [key for key, default in _TOP_KEYS.items() if default is None and key != "duration_s"]
    for key in required:
        if key not in data:
            raise MissingInput(key, "a drill file states " + ", ".join(required) + " (docs/drills.md)")
    for key in ("name", "title", "seed_source", "scenario", "briefing"):
        _text(key, data[key])
    if data["name"] == LIST_WORD:
        raise InputError(
            "name", data["name"], f"another name: `stormdeck drill {LIST_WORD}` lists the drills"
        )
    _scenario_exists(data["scenario"])
    overrides = data.get("overrides", {})
    if not isinstance(overrides, dict):
        raise InputError("overrides", overrides, 'a table of dotted scenario keys, e.g. "nodes.count" = 48')
    for key, value in overrides.items():
        if not key.strip():
            raise InputError(override_field(key), value, 'a dotted scenario key, e.g. "nodes.count" = 48')
    clock_start_s = _human_seconds("clock_start", data.get("clock_start", "00:00"))
    duration_s = data.get("duration_s")
    if duration_s is not None:
        _number("duration_s", duration_s, 1, 86_400)
    timeline = tuple(
        sorted(
            (_timeline_entry(i, entry, clock_start_s) for i, entry in enumerate(_list("timeline", data))),
            key=lambda entry: entry.at_s,
        )
    )
    objectives = tuple(_objective(i, objective) for i, objective in enumerate(_list("objectives", data)))
    if not objectives:
        raise InputError("objectives", [], "at least one [[objectives]] table")
    hints = tuple(_hint(i, hint, objectives) for i, hint in enumerate(_list("hints", data)))
    scoring_data = data.get("scoring", {})
    _known_keys("scoring.", scoring_data, _SCORING_KEYS)
    scoring_values = {**_SCORING_KEYS, **scoring_data}
    _number("scoring.penalty_per_min", scoring_values["penalty_per_min"], 0, 1e6)
    _number("scoring.penalty_below_pct", scoring_values["penalty_below_pct"], 0, 100)
    _number("scoring.max_penalty", scoring_values["max_penalty"], 0, 1e6)
    keep = data.get("keep_scenario_events", False)
    if not isinstance(keep, bool):
        raise InputError("keep_scenario_events", keep, "true or false")
    return Drill(
        name=data["name"],
        title=data["title"],
        seed_source=data["seed_source"],
        teaches=str(data.get("teaches", "")),
        scenario=data["scenario"],
        overrides=dict(overrides),
        keep_scenario_events=keep,
        clock_start_s=clock_start_s,
        duration_s=float(duration_s) if duration_s is not None else None,
        briefing=data["briefing"].strip(),
        timeline=timeline,
        hints=hints,
        objectives=objectives,
        scoring=Scoring(**{key: float(value) for key, value in scoring_values.items()}),
    )


def _known_keys(prefix: str, data: Any, known: dict[str, Any] | set[str]) -> None:
    if not isinstance(data, dict):
        raise InputError(prefix.rstrip(".") or "drill", data, "a table")
    for key in data:
        if key not in known:
            raise InputError(f"{prefix}{key}", data[key], "a known key: " + ", ".join(sorted(known)))


def _text(path: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, value, "a non-empty string")
    return value


def _number(path: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise InputError(path, value, f"a number in [{low:g}, {high:g}]")
    return float(value)


def _list(key: str, data: dict[str, Any]) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise InputError(key, value, f"an array of tables ([[{key}]])")
    return value


def _human_seconds(path: str, value: Any) -> int:
    match = _HUMAN_TIME.match(value) if isinstance(value, str) else None
    if match is None or int(match[1]) > 23 or int(match[2]) > 59 or int(match[3] or 0) > 59:
        raise InputError(path, value, 'a time of day "HH:MM" or "HH:MM:SS"')
    return int(match[1]) * 3600 + int(match[2]) * 60 + int(match[3] or 0)


def at_seconds(path: str, entry: dict[str, Any], clock_start_s: int) -> float:
    """`at = "04:11"` (a time of day, mapped to fleet seconds after `clock_start`) or `at_s = 660`."""
    if ("at" in entry) == ("at_s" in entry):
        raise InputError(path, entry, 'exactly one of at = "HH:MM[:SS]" or at_s = SECONDS')
    if "at_s" in entry:
        return _number(f"{path}.at_s", entry["at_s"], 0, 86_400)
    seconds = _human_seconds(f"{path}.at", entry["at"]) - clock_start_s
    return float(seconds % 86_400)  # a window past midnight: 23:50 → 00:10 is 20 minutes


def _timeline_entry(i: int, entry: Any, clock_start_s: int) -> TimelineEntry:
    from console.sim.scenario import EVENT_ACTIONS

    path = f"timeline.{i}"
    if not isinstance(entry, dict):
        raise InputError(path, entry, "a table with at (or at_s), say and optionally action")
    at_s = at_seconds(path, entry, clock_start_s)
    say = _text(f"{path}.say", entry.get("say"))
    action = entry.get("action")
    if action is not None and action not in EVENT_ACTIONS:
        raise InputError(f"{path}.action", action, "one of " + ", ".join(sorted(EVENT_ACTIONS)))
    params = {key: value for key, value in entry.items() if key not in ("at", "at_s", "say", "action")}
    if action is None and params:
        raise InputError(f"{path}.{next(iter(params))}", params, "no parameters on a marker without action")
    if action is not None:
        check_event(action, params, None, f"{path}.")  # the fleet's own bounds: drill_scenario
    return TimelineEntry(at_s, say, action, params, path)


def _hint(i: int, hint: Any, objectives: tuple[Objective, ...]) -> Hint:
    path = f"hints.{i}"
    _known_keys(f"{path}.", hint, {"after_s", "text", "unless_done", "serves"})
    after_s = _number(f"{path}.after_s", hint.get("after_s"), 0, 86_400)
    unless_done = hint.get("unless_done")
    if unless_done is not None and unless_done not in ACTION_NAMES:
        raise InputError(f"{path}.unless_done", unless_done, "one of " + ", ".join(ACTION_NAMES))
    named = hint.get("serves", [])
    references = named if isinstance(named, list) else [named]
    earned = [
        j for j, objective in enumerate(objectives) if unless_done and _earned_by(objective) == unless_done
    ]
    serves = tuple(
        sorted({*(_served_index(f"{path}.serves", ref, objectives) for ref in references), *earned})
    )
    for j in serves:
        _check_hint_lead(path, hint["after_s"], j, objectives[j])
    text = _text(f"{path}.text", hint.get("text")).strip()
    told = COUNTED_HOT.sub(lambda m: f"{_WIDEST_COUNT} serving nodes over {m.group(1)} % CPU", text)
    if len(told) > HINT_TEXT_MAX:
        raise InputError(
            f"{path}.text",
            text,
            f"at most {HINT_TEXT_MAX} characters (this one has {len(text)}): two rows of an 80-column drill screen",
        )
    return Hint(after_s, text, unless_done, serves)


def counted_hot(frame: Frame | None, cpu_pct: float, line: str) -> str:
    """The serving nodes over `cpu_pct` in `frame` (`Frame.nodes_over`, the abort criterion's reading), as a
    hint says them: "42 serving nodes over 80 % CPU", "1 serving node …", "no serving node …"; with no
    frame, "serving nodes over 80 % CPU". `line`: the percentage as the file wrote it."""
    if frame is None:
        return f"serving nodes over {line} % CPU"
    hot = len(frame.nodes_over(cpu_pct))
    count = "no serving node" if hot == 0 else "1 serving node" if hot == 1 else f"{hot} serving nodes"
    return f"{count} over {line} % CPU"


def _earned_by(objective: Objective) -> str | None:
    """The action that earns `objective` on its own (a halt earns `halt_within`, `action_used` its action)."""
    if objective.kind == "action_used":
        return str(objective.params["action"])
    return _EARNED_BY.get(objective.kind)


def _served_index(path: str, reference: Any, objectives: tuple[Objective, ...]) -> int:
    """`serves = "halt_within"` (an objective kind only one objective has) or `"objectives.2"` (its place)."""
    places = f"objectives.0 to objectives.{len(objectives) - 1}"
    kinds = [objective.kind for objective in objectives]
    allowed = (
        f"an objective's kind that only one of them has ({', '.join(dict.fromkeys(kinds))}) "
        f"or its place ({places})"
    )
    if isinstance(reference, str):
        match = re.fullmatch(r"objectives\.(\d+)", reference)
        if match is not None and int(match[1]) < len(objectives):
            return int(match[1])
        same = [j for j, kind in enumerate(kinds) if kind == reference]
        if len(same) == 1:
            return same[0]
        if len(same) > 1:
            named = ", ".join(f"objectives.{j}" for j in same)
            raise InputError(
                path,
                reference,
                f"one objective: {len(same)} are {reference} ({named}); name one by its place",
            )
    raise InputError(path, reference, allowed)


def _check_hint_lead(path: str, after_s: float | int, index: int, objective: Objective) -> None:
    """A hint comes `HINT_LEAD_S` before the fixed deadline of an objective it serves: an action's `by_s`, a
    rollout's `within_s`. (A halt's deadline follows the fleet's abort criterion: the packaged drills are
    checked against their runs, tests/drills/test_hints.py.)"""
    params = objective.params
    if objective.kind == "action_used" and params["by_s"] != math.inf:
        key, deadline_s = "by_s", float(params["by_s"])
    elif objective.kind == "rollout_completed":
        key, deadline_s = "within_s", float(params["within_s"])
    else:
        return
    if after_s > deadline_s - HINT_LEAD_S:
        raise InputError(
            f"{path}.after_s",
            after_s,
            f"at most {deadline_s - HINT_LEAD_S:g} ({HINT_LEAD_S:g} s before the deadline of "
            f"objectives.{index}, {objective.kind} {key} {deadline_s:g}): acting on the hint must still "
            "earn its points",
        )


def _objective(i: int, objective: Any) -> Objective:
    path = f"objectives.{i}"
    if not isinstance(objective, dict):
        raise InputError(path, objective, "a table with name, kind and points")
    kind = objective.get("kind")
    if kind not in OBJECTIVE_KINDS:
        raise InputError(f"{path}.kind", kind, "one of " + ", ".join(sorted(OBJECTIVE_KINDS)))
    spec = OBJECTIVE_KINDS[kind]
    _known_keys(f"{path}.", objective, {"name", "kind", "points", *spec})
    name = _text(f"{path}.name", objective.get("name"))
    points = _number(f"{path}.points", objective.get("points"), 0, 1e6)
    params: dict[str, Any] = {}
    for key, default in spec.items():
        value = objective.get(key, default)
        if value is None:
            raise MissingInput(f"{path}.{key}", f"{kind} needs {key}")
        params[key] = value
    _check_objective_params(path, kind, params)
    return Objective(name, kind, points, params)


def _check_objective_params(path: str, kind: str, params: dict[str, Any]) -> None:
    for key in ("min_pct", "pct", "cpu_pct"):
        if key in params:
            _number(f"{path}.{key}", params[key], 0, 100)
    for key in ("within_s", "for_s", "grace_s"):
        if key in params:
            _number(f"{path}.{key}", params[key], 0, 86_400)
    if kind in TOTALS_KINDS:
        if params["field"] not in TOTALS_FIELDS:
            raise InputError(f"{path}.field", params["field"], "one of " + ", ".join(TOTALS_FIELDS))
        line = TOTALS_KINDS[kind]
        _number(f"{path}.{line}", params[line], 0, 1e12)
    if kind == "action_used":
        if params["action"] not in ACTION_NAMES:
            raise InputError(f"{path}.action", params["action"], "one of " + ", ".join(ACTION_NAMES))
        _number(f"{path}.min_count", params["min_count"], 1, 10_000)
        if params["by_s"] != math.inf:  # (the default: any time)
            _number(f"{path}.by_s", params["by_s"], 0, 86_400)
        if not isinstance(params["where"], dict):
            raise InputError(f"{path}.where", params["where"], "a table of request fields and values")
        _check_where(f"{path}.where", params["action"], params["where"])


def _check_where(path: str, action: str, where: dict[str, Any]) -> None:
    """`where` names fields of the action's request body, with values it could hold: a misspelt key
    (`mood = "drain"`) would leave the objective one no run can meet."""
    from pydantic import TypeAdapter, ValidationError

    model = ACTION_BODIES[action]
    fields = sorted(key for key in model.model_fields if key != "confirm")
    for key, value in where.items():
        if key not in fields:
            raise InputError(f"{path}.{key}", value, f"a field of {action}'s request: " + ", ".join(fields))
        try:
            TypeAdapter(model.model_fields[key].annotation).validate_python(value)
        except ValidationError:
            raise InputError(f"{path}.{key}", value, f"a value {action}'s {key} can take") from None


def _scenario_exists(name: str) -> None:
    from console.sim.scenario_loader import list_scenarios

    names = [known for known, _ in list_scenarios()]
    if name not in names:
        raise InputError("scenario", name, "one of " + ", ".join(names))
