"""A recorder to kill: writes frames from a JSON-lines file round and round, reporting each one written.

    python -m tests.record._writer_child FRAMES.jsonl OUT [MAX_BYTES]

Prints `seq` after each frame is appended, so the parent knows what must survive a SIGKILL.
"""

from __future__ import annotations

import sys
from pathlib import Path

from console.protocol import Frame
from console.record.writer import RecordingWriter, Retention
from tests.record.conftest import header


def main() -> None:
    frames = [Frame.model_validate_json(line) for line in Path(sys.argv[1]).read_text().splitlines()]
    retention = Retention(max_bytes=int(sys.argv[3])) if len(sys.argv) > 3 else None
    seq = 0
    with RecordingWriter(Path(sys.argv[2]), header(), retention=retention, fsync=False) as writer:
        while True:
            for frame in frames:
                seq += 1
                writer.write(frame.model_copy(update={"seq": seq, "time_s": float(seq)}))
                print(seq, flush=True)


if __name__ == "__main__":
    main()
