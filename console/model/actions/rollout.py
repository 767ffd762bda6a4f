"""The rollout form's starting values."""

from __future__ import annotations

from console.guards import Thresholds
from console.model.actions.form import Prefill, form_text
from console.protocol import RolloutStatus


def rollout_prefill(rollout: RolloutStatus | None, thresholds: Thresholds) -> Prefill:
    batch = rollout.batch_size if rollout is not None and rollout.batch_size else 2
    return Prefill(
        {
            "batch_size": str(batch),
            "interval_s": "90",  # the outage seed's cadence; the guards judge it against headroom
            "mode": "drain",
            "pause_cpu_pct": form_text(float(thresholds.cpu_pause_pct)),
        },
        "drain mode pauses at the CPU line (outage seed: 75 %)",
    )
