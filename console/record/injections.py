"""Who cut the fleet: the injections (an instructor's, a drill timeline's) and the scenario's own script.

A mass disconnect one of them made is the incident a trainee answers, not a choice the trainee made: the
report's timeline names who made it and the findings leave it out of "drain, don't disconnect". Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from console.protocol import Event, named_instructor

#: The injections that cut connections (console.sim.injection): what they cut is the incident's doing.
CUTTING_INJECTIONS = frozenset({"restart_nodes", "kill_nodes", "disconnect_fraction"})
INSTRUCTOR = "the instructor"
DRILL_TIMELINE = "the drill's timeline"
#: The scenario's own script (its timeline, its rollout), as a disconnect it made says (`data.scripted`).
SCENARIO = "the scenario"


def instructor(actor: object) -> str:
    """Who injected, as the report says it: "instructor dana" where the `injection` event names its actor
    (as the audit log does: with two instructors, which one cut the fleet), "the instructor" where an older
    recording's names nobody, or names `drill --serve`'s own admin token, "instructor"."""
    name = named_instructor(actor)
    return f"instructor {name}" if name else INSTRUCTOR


@dataclass(frozen=True)
class Injection:
    """An event injected into the fleet, as the recording tells it: an instructor's (`stormdeck inject`:
    an `injection` event, after the events it caused), a drill's timeline's (a `drill` event naming its
    `action`, before them), or the scenario's own script's (its timeline or rollout: the disconnect says
    so itself, `data.scripted`). Each is the incident a trainee answers, not a choice the trainee made."""

    time_s: float
    by: str  # "instructor NAME" (else INSTRUCTOR), DRILL_TIMELINE or SCENARIO
    event: str  # restart_nodes, kill_nodes, disconnect_fraction, … (the scenario's: also `rollout`)
    params: dict

    @classmethod
    def scripted(cls, disconnect: Event) -> Injection | None:
        """The scenario's script, when the disconnect says it made it (a simulator's since it says so)."""
        what = disconnect.data.get("scripted")
        return cls(disconnect.time_s, SCENARIO, what, {}) if isinstance(what, str) else None

    @property
    def verb(self) -> str:
        return "scripted" if self.by == SCENARIO else "injected"

    @classmethod
    def told_by(cls, event: Event) -> Injection | None:
        if event.kind == "injection" and isinstance(event.data.get("event"), str):
            by = instructor(event.data.get("actor"))
            return cls(event.time_s, by, event.data["event"], dict(event.data.get("params") or {}))
        if event.kind == "drill" and isinstance(event.data.get("action"), str):
            return cls(
                event.time_s, DRILL_TIMELINE, event.data["action"], dict(event.data.get("params") or {})
            )
        return None

    def cut(self, disconnect: Event) -> bool:
        """Whether this injection made the mass `disconnect`: in the fleet second it landed in (an
        instructor's lands between two seconds and is stamped with the disconnect's time; a timeline entry
        fires at the first second at or after its time), on the nodes it names."""
        if self.event not in CUTTING_INJECTIONS or not self.time_s <= disconnect.time_s < self.time_s + 1:
            return False
        nodes = disconnect.node_ids()
        named = self.params.get("nodes")
        if self.event == "disconnect_fraction":
            return not nodes  # a fleet-wide reset names no node
        if isinstance(named, list):
            return bool(nodes) and set(nodes) <= {str(node) for node in named}
        return isinstance(named, int) and 0 < len(nodes) <= named  # `nodes = 20`: the first 20 (or `first`)

    @property
    def text(self) -> str:
        return f"{self.event} by {self.by}"
