"""The lines a form is pre-filled against: the server's (`GET /v1/thresholds`, what its guards judge every
action with), else the console's own — saying so, since the server may judge with others.

A console with the defaults pre-filled a rollout's 75 % pause line for a server run with
STORMDECK_CPU_PAUSE_PCT=60, which then asked for the fleet's name typed back: the design has the server
judge, so the form starts from the server's lines wherever the server says them.
"""

from __future__ import annotations

from dataclasses import dataclass

from console.errors import InputError
from console.guards import Thresholds
from console.guards.thresholds import threshold_fields
from console.model.actions.form import Prefill
from console.protocol import ThresholdsRecord

#: Why the console's own: the server answers GET /v1/thresholds 404 (older than the route).
NOT_OFFERED = "the server has no GET /v1/thresholds"


@dataclass(frozen=True)
class FormThresholds:
    """The thresholds a form's starting values are computed with; `fallback` says why they are the
    console's own (None: they are the server's)."""

    thresholds: Thresholds
    fallback: str | None = None

    @property
    def whose(self) -> str:
        """ "" for the server's; else "this console's thresholds: <why>"."""
        return "" if self.fallback is None else f"this console's thresholds: {self.fallback}"

    def noted(self, prefill: Prefill) -> Prefill:
        """`prefill` with a line under its note when it was computed with the console's own lines."""
        if self.fallback is None:
            return prefill
        return Prefill(prefill.values, f"{prefill.source}\n▲ pre-filled with {self.whose}", prefill.check)


def servers_thresholds(record: ThresholdsRecord, own: Thresholds) -> FormThresholds:
    """The server's values over the console's. A threshold the server does not name keeps the console's
    value; one the console does not know (a newer server's) is left out. Values this console's ranges
    refuse leave the console's own, saying which."""
    known = {item.name for item in threshold_fields()}
    values = {name: item.value for name, item in record.thresholds.items() if name in known}
    try:
        return FormThresholds(own.replace(**values))
    except InputError as error:
        return FormThresholds(
            own, f"the server's {error.field} = {error.value} is beyond this console's range"
        )


def own_thresholds(own: Thresholds, status: int, reason: str) -> FormThresholds:
    """The console's own, when the server's could not be had: `status` and `reason` of the refusal (404:
    a server older than the route, a controller included)."""
    if status in (404, 405):
        return FormThresholds(own, NOT_OFFERED)
    return FormThresholds(own, f"the server's could not be read ({reason})")
