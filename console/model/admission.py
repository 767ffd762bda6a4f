"""Admission settings in the operator's words: one wording for the rollout & admission panel and the node
detail ("5/s per node", "ceiling none", "Retry-After 1–30 s"), and where a setting runs when nodes differ
("5/s on 3 nodes", "unlimited elsewhere")."""

from __future__ import annotations

from collections.abc import Callable, Sequence

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


def _limit(value: float | None, unit: str = "") -> str:
    if value is None:
        return "unlimited"
    return f"{value:g}{unit}" if isinstance(value, float) else f"{value:,}{unit}"


#: Each setting as a change says it: its word, and its value in words.
_SAID: tuple[tuple[str, Callable[[AdmissionSettings], str]], ...] = (
    ("rate", lambda s: _limit(s.rate_per_s, "/s")),
    ("burst", lambda s: _limit(s.burst)),
    ("ceiling", lambda s: _limit(s.max_connections)),
    ("Retry-After", retry_after_words),
)


def sent_words(settings: AdmissionSettings) -> str:
    """Every setting of a change as sent, a lifted limit said ("rate unlimited, burst 20, ceiling
    unlimited, Retry-After 1–30 s"), where what the nodes ran is not known."""
    return ", ".join(f"{word} {said(settings)}" for word, said in _SAID)


def change_words(in_force: AdmissionInForce, settings: AdmissionSettings, nodes: Sequence[str] | None) -> str:
    """What a change to `settings` (on `nodes`; None: the fleet) changes on the nodes it covers, setting by
    setting, against what each ran: "rate 50/s → unlimited, burst 20 → unlimited", said where the covered
    nodes ran different values ("burst 20 on 2 nodes → unlimited"); "no setting changes". The answer, the
    audit record and the console's L said "(retry_after_s=[1, 30])" for a change that lifted every limit:
    a lifted limit is null, and null was left out (found on a real fleet)."""
    groups = in_force.covered(nodes)
    words: list[str] = []
    for word, said in _SAID:
        after = said(settings)
        befores = [said(group.settings) for group in groups]
        if len(set(befores)) == 1:
            if befores[0] != after:
                words.append(f"{word} {befores[0]} → {after}")
            continue
        words.extend(
            f"{word} {before} {_where(group)} → {after}"
            for before, group in zip(befores, groups, strict=True)
            if before != after
        )
    return ", ".join(words) or "no setting changes"


def _where(group: AdmissionGroup) -> str:
    """Where a group's nodes are, for a record read later: "on gw-001", "on 3 nodes", "elsewhere" (the
    nodes no override names, where the node ids are not known)."""
    nodes = group.nodes
    if not nodes:
        return "elsewhere"
    return f"on {nodes[0]}" if len(nodes) == 1 else f"on {len(nodes)} nodes"
