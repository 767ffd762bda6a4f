"""The admission form's starting values: the fleet's admission settings now."""

from __future__ import annotations

from console.model.actions.form import Prefill, form_text
from console.protocol import AdmissionSettings


def admission_prefill(admission: AdmissionSettings | None) -> Prefill:
    if admission is None:
        return Prefill({"retry_after_min_s": "1", "retry_after_max_s": "30"}, "no admission settings seen")
    low, high = admission.retry_after_s
    return Prefill(
        {
            "rate_per_s": form_text(admission.rate_per_s),
            "burst": form_text(admission.burst),
            "max_connections": form_text(admission.max_connections),
            "retry_after_min_s": form_text(float(low)),
            "retry_after_max_s": form_text(float(high)),
        },
        "the fleet's admission settings now",
    )
