"""Rollout and admission, read-only: state, batch k of n, pause reason, whether this fleet can roll out at
all, admission settings."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from console.protocol import AdmissionSettings, RolloutStatus


def rollout_text(rollout: RolloutStatus | None, admission: AdmissionSettings | None) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    if rollout is None:
        text.append("rollout  —\n")
    else:
        text.append("rollout  ", style="bold")
        text.append(rollout.state.value)
        if rollout.batches:
            text.append(f"  batch {rollout.batch} of {rollout.batches}")
        if rollout.mode:
            text.append(f"  mode {rollout.mode.value}")
        text.append("\n")
        reason = rollout.pause_reason
        if reason:
            # Said under the state it explains: a halt read "paused: halted by operator".
            state = rollout.state.value
            text.append(f"  {reason}\n" if reason.startswith(state) else f"  {state}: {reason}\n")
        if rollout.unavailable:
            # Briefly: R refuses with the fleet's own words, and the panel has room for one line.
            text.append("  not on this fleet — see R\n")
    if admission is None:
        text.append("admission  —")
        return text
    text.append("admission  ", style="bold")
    rate = "unlimited" if admission.rate_per_s is None else f"{admission.rate_per_s:g}/s per node"
    # Per node, as the rate above it says: a bare "ceiling 300" beside "5/s per node" left it to guess.
    ceiling = "none" if admission.max_connections is None else f"{admission.max_connections:,} per node"
    text.append(f"{rate}  burst {admission.burst if admission.burst is not None else '—'}\n")
    low, high = admission.retry_after_s
    text.append(f"  ceiling {ceiling}  Retry-After {low:g}–{high:g} s")
    if admission.nodes is not None:
        text.append(f"  on {len(admission.nodes)} nodes")
    return text


class RolloutPanel(Static):
    shown = ""  # the text on screen, so an unchanged frame costs no layout pass

    DEFAULT_CSS = """
    RolloutPanel {
        height: auto;
        max-height: 6;
        padding: 0 1;
    }
    """
