"""Measure the recording format on real simulator frames: size per hour, write, open and seek cost.

    PYTHONPATH=. python -m tests.record.measure_recording FRAMES.jsonl [FRAMES.jsonl ...]

Each FRAMES.jsonl is what `stormdeck sim run SCENARIO --frames FILE` writes (frames and events). The hour is
built by replaying the captured seconds round and round, re-stamped, so its mix of calm and storm is the
capture's. Not a test (pytest does not collect it); docs/recording.md quotes its output.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
import zlib
from pathlib import Path

from console.protocol import Event, Frame
from console.record.reader import RecordingReader
from console.record.writer import DEFAULT_LEVEL, RecordingWriter
from tests.record.conftest import header

HOUR_S = 3600


def _load(path: Path) -> list[tuple[Frame, list[Event]]]:
    ticks: list[tuple[Frame, list[Event]]] = []
    pending: list[Event] = []
    for line in path.read_text().splitlines():
        if line.startswith('{"type":"frame"'):
            ticks.append((Frame.model_validate_json(line), pending))
            pending = []
        else:
            pending.append(Event.model_validate_json(line))
    return ticks


def measure(path: Path) -> None:
    ticks = _load(path)
    nodes = len(ticks[0][0].nodes)
    texts = [frame.model_dump_json().encode() for frame, _ in ticks]
    raw = sum(map(len, texts)) / len(texts)
    for level in (1, DEFAULT_LEVEL, 9):
        started = time.perf_counter()
        sizes = [len(zlib.compress(t, level)) for t in texts]
        per_frame_ms = (time.perf_counter() - started) / len(texts) * 1000
        print(
            f"{path.name}: {nodes} nodes, level {level}: {sum(sizes) / len(sizes) / 1024:.1f} KiB/frame "
            f"(raw {raw / 1024:.0f} KiB, min {min(sizes) / 1024:.1f}, max {max(sizes) / 1024:.1f}), "
            f"{per_frame_ms:.2f} ms/frame"
        )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "hour.sdrec"
        started = time.perf_counter()
        with RecordingWriter(out, header(), fsync=True) as writer:
            for second in range(HOUR_S):
                frame, events = ticks[second % len(ticks)]
                stamp = {"seq": second + 1, "time_s": float(second + 1)}
                for event in events:
                    writer.write(event.model_copy(update={"time_s": float(second)}))
                writer.write(frame.model_copy(update=stamp))
        write_ms = (time.perf_counter() - started) / HOUR_S * 1000
        size = out.stat().st_size
        started = time.perf_counter()
        recording = RecordingReader(out)
        open_ms = (time.perf_counter() - started) * 1000
        rng = random.Random(1)
        started = time.perf_counter()
        for _ in range(200):
            recording.seek(rng.uniform(0, HOUR_S))
        seek_ms = (time.perf_counter() - started) / 200 * 1000
        started = time.perf_counter()
        frames = sum(1 for _ in recording.frames())
        read_ms = (time.perf_counter() - started) / frames * 1000
        recording.close()
        print(
            f"  one hour ({len(ticks)} captured seconds round and round, events included): "
            f"{size / 1e6:.1f} MB; write+fsync {write_ms:.1f} ms/frame (model_dump_json included); "
            f"open {open_ms:.0f} ms; seek+decode {seek_ms:.1f} ms; read all {read_ms:.1f} ms/frame"
        )


if __name__ == "__main__":
    for name in sys.argv[1:]:
        measure(Path(name))
