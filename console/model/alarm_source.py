"""Which rules feed the alarm log: the pure `console.alarms` engine when it is installed, else a stand-in.

The stand-in raises an alarm for every gauge at warning or worse, every node over the CPU abort line and
lockstep waves — enough for the panel to show real alarms until the engine lands; it is not the rule set.
"""

from __future__ import annotations

from console.model.alarms import AlarmSource
from console.model.gauges import fleet_gauges, node_cpu_level
from console.model.history import FleetModel
from console.model.thresholds import Level
from console.protocol import Alarm, Frame, Severity

_SEVERITY = {Level.WARNING: Severity.WARNING, Level.CRITICAL: Severity.CRITICAL}
LOCKSTEP_ALARM_INDEX = 4.0  # issue #2: 4 or more means waves


class GaugeAlarms:
    """Stand-in rules read from the model's own gauges (so nothing is computed twice)."""

    def __init__(self, model: FleetModel) -> None:
        self.model = model
        self._since: dict[tuple[str, str | None], float] = {}

    def __call__(self, frame: Frame) -> list[Alarm]:
        raised: list[Alarm] = []
        for gauge in fleet_gauges(self.model):
            if gauge.level >= Level.WARNING:
                raised.append(
                    self._alarm(
                        gauge.key,
                        _SEVERITY[gauge.level],
                        frame,
                        None,
                        f"{gauge.label} {gauge.value}: {gauge.detail}",
                    )
                )
        t = self.model.thresholds
        for node in frame.nodes:
            if node_cpu_level(node, t) is Level.CRITICAL:
                raised.append(
                    self._alarm(
                        "cpu_abort",
                        Severity.CRITICAL,
                        frame,
                        node.id,
                        f"CPU {node.cpu_pct:.0f} %",
                        node.cpu_pct,
                        t.cpu_crit_pct,
                    )
                )
        if self.model.lockstep >= LOCKSTEP_ALARM_INDEX:
            raised.append(
                self._alarm(
                    "lockstep_waves",
                    Severity.WARNING,
                    frame,
                    None,
                    "attempts arrive in waves",
                    self.model.lockstep,
                    LOCKSTEP_ALARM_INDEX,
                )
            )
        held = {(a.name, a.node) for a in raised}
        self._since = {key: since for key, since in self._since.items() if key in held}
        return raised

    def _alarm(
        self, name: str, severity: Severity, frame: Frame, node: str | None, message: str,
        value: float | None = None, limit: float | None = None,
    ) -> Alarm:  # fmt: skip
        since = self._since.setdefault((name, node), frame.time_s)
        # model_construct: our own values, already typed; validating a thousand alarms a frame costs ms.
        return Alarm.model_construct(
            name=name,
            severity=severity,
            since_s=since,
            value=value,
            limit=limit,
            message=message,
            active=True,
            node=node,
        )


def default_alarm_source(model: FleetModel) -> AlarmSource:
    """The `console.alarms` engine when installed (update(frame), then .active); else GaugeAlarms."""
    try:
        from console.alarms import AlarmEngine  # type: ignore[attr-defined]
    except ImportError:
        return GaugeAlarms(model)
    engine = AlarmEngine()

    def engine_source(frame: Frame) -> list[Alarm]:
        engine.update(frame)
        return list(engine.active)

    return engine_source


def console_model() -> FleetModel:
    """A model wired to the alarm rules: what every console (live, bench, screenshots) starts from."""
    model = FleetModel()
    model.alarm_source = default_alarm_source(model)
    return model
