"""How many 503s or timeouts a recording holds, exactly where the source's running counts say. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from console.record.series import Series


@dataclass(frozen=True)
class Count:
    """How many of something (503s, timeouts, …) happened in the recording's fleet seconds, and how well
    that is known. `total` = `counted` (exact, over `counted_s` fleet seconds) + an estimate over
    `estimated_s` seconds; `uncounted_s` seconds are in neither (see `count`)."""

    total: int
    counted: int
    counted_s: float
    estimated_s: float = 0.0
    uncounted_s: float = 0.0
    running: bool = False  # some of it from the source's running counts

    @property
    def estimated(self) -> bool:
        return self.estimated_s > 0


def count(series: Series, rate: str, running: str) -> Count:
    """Count what the `rate` (per second) measured over the recording's frames, exactly where possible.

    A frame stands for `span_s` fleet seconds and carries the rates of its last one only. Where the source
    keeps a `running` count (`totals.*_total`, since its fleet started), the seconds between two frames of
    one epoch are counted exactly by its difference — those a sped-up frame folds in, and any a gap in the
    recording skipped. Counts restart with the fleet (a new epoch), so no difference is taken across
    epochs. A frame no earlier frame of its epoch bounds (the recording's first, the first after a
    restart) is counted by its rate for its last second; the seconds before that (a recording joining a
    sped-up source mid-run) are `uncounted_s`: its running count holds them, but also everything since
    the fleet started. A frame without running counts (an older source) standing for several seconds is
    estimated as before: its last second's rate for each of them (`estimated_s`).
    """
    counted = estimated = 0
    counted_s = estimated_s = uncounted_s = 0.0
    used = False
    previous: tuple[str, float, int] | None = None  # epoch, time, running count of the frame before
    columns = zip(
        series.epochs,
        series.times_s,
        series.span_s,
        getattr(series, rate),
        series.running[running],
        strict=True,
    )
    for epoch, time_s, span_s, per_s, total in columns:
        if (
            total is not None
            and previous is not None
            and previous[0] == epoch
            and time_s >= previous[1]
            and total >= previous[2]
        ):
            counted += total - previous[2]
            counted_s += time_s - previous[1]
            used = True
        else:
            last_s = min(span_s, 1.0)  # 0 for a paused frame: it repeats the last second's rates
            counted += round(per_s * last_s)
            counted_s += last_s
            if total is None:
                estimated += round(per_s * (span_s - last_s))
                estimated_s += span_s - last_s
            else:
                uncounted_s += span_s - last_s
        previous = (epoch, time_s, total) if total is not None else None
    return Count(counted + estimated, counted, counted_s, estimated_s, uncounted_s, used)
