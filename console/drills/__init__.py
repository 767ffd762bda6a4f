"""Drills: a seed's incident rehearsed against the simulator, scored on measured objectives."""

#: `stormdeck drill list` lists the drills, as `sim list` lists the scenarios: a drill of that name could
#: never be run by it, so none may have it (`schema.build_drill`).
LIST_WORD = "list"
