"""Admission settings in the operator's words: one wording for the rollout & admission panel and the node
detail ("5/s per node", "ceiling none", "Retry-After 1–30 s"), and where a setting runs when nodes differ
("5/s on 3 nodes", "unlimited elsewhere")."""

from __future__ import annotations

from console.protocol import AdmissionGroup, AdmissionInForce, AdmissionSettings

#: What a rate or a ceiling says when every node runs it; a group's says where instead (`where_said`).
PER_NODE = " per node"


def rate_words(settings: AdmissionSettings) -> str:
    return "unlimited" if settings.rate_per_s is None else f"{settings.rate_per_s:g}/s{PER_NODE}"


def ceiling_words(settings: AdmissionSettings) -> str:
    # Per node, as the rate says: a bare "ceiling 300" beside "5/s per node" left it to guess.
    return "none" if settings.max_connections is None else f"{settings.max_connections:,}{PER_NODE}"


def burst_words(settings: AdmissionSettings) -> str:
    return "—" if settings.burst is None else f"{settings.burst:,}"


def retry_after_words(settings: AdmissionSettings) -> str:
    low, high = settings.retry_after_s
    return f"{low:g}–{high:g} s"


def where_said(words: str, group: AdmissionGroup) -> str:
    """`words` (a figure of the group's settings, each node's own as every admission figure is) with where
    its nodes run it: "on gw-001", "on 3 nodes", "elsewhere" for the nodes no override names."""
    if group.rest:
        return f"{words} elsewhere"
    nodes = group.nodes or ()
    return f"{words} on {nodes[0]}" if len(nodes) == 1 else f"{words} on {len(nodes)} nodes"


def node_admission_readings(in_force: AdmissionInForce | None, node_id: str) -> list[str]:
    """The admission `node_id` runs, and whose setting it is: "set on this node; elsewhere unlimited" for
    a per-node override, "the fleet's; 2 nodes run their own" for the rest; [] where every node runs the
    fleet's (the rollout & admission box says it: a node detail at 80×24 gave it two rows of its charts)
    or the frames say nothing of it."""
    if in_force is None:
        return []
    apart = sum(len(group.nodes or ()) for group in in_force.groups() if not group.rest)
    if not apart:
        return []
    settings = in_force.for_node(node_id)
    readings = [
        f"admission {rate_words(settings)}",
        f"burst {burst_words(settings)}",
        f"ceiling {ceiling_words(settings)}",
        f"Retry-After {retry_after_words(settings)}",
    ]
    if in_force.overridden(node_id):
        return [*readings, f"set on this node; elsewhere {rate_words(in_force.elsewhere)}"]
    return [*readings, f"the fleet's; {apart} {'node runs its' if apart == 1 else 'nodes run their'} own"]


def settings_words(settings: AdmissionSettings) -> str:
    """One node's settings on one line, for a sentence ("rate 5/s per node, burst 10, Retry-After 1–30 s";
    "unlimited"): what a controller's event says a restarted node ran and was given."""
    if settings.rate_per_s is None and settings.max_connections is None:
        return "unlimited"
    words = [f"rate {rate_words(settings)}"]
    if settings.burst is not None:
        words.append(f"burst {burst_words(settings)}")
    if settings.max_connections is not None:
        words.append(f"ceiling {ceiling_words(settings)}")
    return ", ".join([*words, f"Retry-After {retry_after_words(settings)}"])
