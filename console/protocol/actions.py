"""The kinds of action an operator may ask of the fleet: one list that the console's forms and the
server's routes both name actions by (a verdict, the audit log and a recording carry the value)."""

from __future__ import annotations

from enum import StrEnum


class ActionKind(StrEnum):
    """As a verdict names the action (and the audit log, and a recording)."""

    DRAIN = "drain"
    UNDRAIN = "undrain"
    ROLLOUT_START = "rollout_start"
    ROLLOUT_HALT = "rollout_halt"
    ROLLOUT_RESUME = "rollout_resume"
    ADMISSION = "admission"
    ADD_CAPACITY = "add_capacity"

    @property
    def needs_node(self) -> bool:
        """Whether the action is addressed to one node (its id in the path) rather than the fleet."""
        return self in (ActionKind.DRAIN, ActionKind.UNDRAIN)

    @property
    def runs_on(self) -> bool:
        """Whether applying it starts something that goes on for minutes (answered 202, not 200): a drain,
        a rollout, and nodes that take the fleet's provisioning time to be ready."""
        return self in (ActionKind.DRAIN, ActionKind.ROLLOUT_START, ActionKind.ADD_CAPACITY)

    @property
    def title(self) -> str:
        """The operator's words for it (a form's title, a palette entry, a notice)."""
        return _TITLES[self]


_TITLES = {
    ActionKind.DRAIN: "drain",
    ActionKind.UNDRAIN: "undrain",
    ActionKind.ROLLOUT_START: "start rollout",
    ActionKind.ROLLOUT_HALT: "halt rollout",
    ActionKind.ROLLOUT_RESUME: "resume rollout",
    ActionKind.ADMISSION: "admission",
    ActionKind.ADD_CAPACITY: "add capacity",
}
