"""The docs list every alarm name and every threshold: a new one without its line fails here."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from console.alarms import AlarmName
from console.guards import Thresholds

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_every_alarm_is_documented() -> None:
    text = (DOCS / "alarms.md").read_text(encoding="utf-8")
    assert [name for name in AlarmName if f"| `{name}` |" not in text] == []


def test_every_threshold_is_documented_with_its_default() -> None:
    text = (DOCS / "guards.md").read_text(encoding="utf-8")
    missing = [
        f.name for f in dataclasses.fields(Thresholds) if f"| `{f.name}` | {f.default:g} |" not in text
    ]
    assert missing == []


# --- `sim run --json` and `--frames`: docs/scenarios.md lists every key a real run writes, and no other ---

#: A run small enough for a test that writes every record `--frames` can hold from the simulator: a drain
#: rollout (nodes[].drain, rollout.waiting_for) and a mass disconnect (alarm events).
_EVERY_RECORD = """name = "every-record"
duration_s = 40
[clients]
count = 4_000
[nodes]
count = 4
capacity_connections = 2_000
restart_s = 5
[rollout]
enabled = true
start_at_s = 2
batch_size = 1
interval_s = 5
mode = "drain"
drain_rate_per_s = 500
drain_deadline_s = 10
[[events]]
at_s = 25
action = "disconnect_fraction"
fraction = 0.5
"""


def _section(heading: str) -> str:
    text = (DOCS / "scenarios.md").read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _walk(path: str, value: object, keys: dict[str, set[str]]) -> None:
    """Each object's keys by its path (`frame.nodes[].drain`); an event's `data` is the kind's own."""
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                _walk(f"{path}[]", item, keys)
    elif isinstance(value, dict) and path != "event.data":
        keys.setdefault(path, set()).update(value)
        for key, item in value.items():
            _walk(f"{path}.{key}", item, keys)


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, list[dict]]:
    from console.cli.sim import run_scenario

    folder = tmp_path_factory.mktemp("run")
    scenario = folder / "every-record.toml"
    scenario.write_text(_EVERY_RECORD, encoding="utf-8")
    summary = run_scenario(str(scenario), [], None, None, folder / "frames.jsonl")
    lines = (folder / "frames.jsonl").read_text(encoding="utf-8").splitlines()
    return json.loads(json.dumps(summary)), [json.loads(line) for line in lines]


def test_every_sim_run_json_key_is_documented(real_run: tuple[dict, list[dict]]) -> None:
    summary, _ = real_run
    documented = re.findall(r"^\| `(\w+)` \|", _section("`sim run --json`"), flags=re.MULTILINE)
    assert documented == list(summary)  # every key, once, in the order the object has them


def test_every_frames_record_and_key_is_documented(real_run: tuple[dict, list[dict]]) -> None:
    _, records = real_run
    real: dict[str, set[str]] = {}
    for record in records:
        _walk(record["type"], record, real)
    section = _section("`sim run --frames FILE.jsonl`")
    rows = re.findall(r"^\| `([\w.\[\]]+)` \| ([^|]*) \|", section, flags=re.MULTILINE)
    documented = {path: set(re.findall(r"`(\w+)`", keys)) for path, keys in rows}
    assert documented == real
    kinds = {record["kind"] for record in records if record["type"] == "event"}
    assert {kind for kind in kinds if f"`{kind}`" not in section} == set()
