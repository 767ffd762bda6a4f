"""docs/policies.md lists every policy with its defaults and max state: a change without its line fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from console.policies import POLICIES, make_policy

DOC = (Path(__file__).resolve().parents[2] / "docs" / "policies.md").read_text(encoding="utf-8")


def row(name: str) -> list[str]:
    lines = [line for line in DOC.splitlines() if line.startswith(f"| `{name}` |")]
    assert len(lines) == 1, name
    return [cell.strip() for cell in lines[0].strip("|").split("|")]


def number(value: float) -> str:
    return f"{value:g}"


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_every_policy_has_its_row_with_defaults_and_max_state(name: str) -> None:
    policy = make_policy(name)
    _, _, defaults, max_state, _ = row(name)
    assert max_state.split()[0] == str(policy.max_state)
    for key, value in policy.describe().items():
        if key == "policy":
            continue
        shown = ", ".join(number(v) for v in value) if isinstance(value, tuple) else number(value)
        assert f"`{key}` {shown}" in defaults, (key, shown, defaults)
