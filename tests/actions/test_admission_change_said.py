"""An admission change says what it changed — in the answer `stormdeck act` prints, the audit record the
console's L lists, and the stream's event — against what the nodes ran just before it (found on a real
fleet: lifting every limit read "admission fleet (retry_after_s=[1, 30]): applied")."""

from __future__ import annotations

import asyncio

import pytest

from console.cli import main
from tests.actions.conftest import TOKENS, Acting


@pytest.fixture
def operator(monkeypatch) -> None:
    monkeypatch.setenv("STORMDECK_TOKEN", TOKENS["operator"])


def test_lifting_every_limit_says_each_limit_lifted(acting: Acting, operator, capsys) -> None:
    limits = ["--rate", "50", "--burst", "20", "--max-connections", "40000", "--yes"]
    assert main(["act", acting.url, "admission", *limits]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "200 admission fleet (rate unlimited → 50/s, burst unlimited → 20, ceiling unlimited → 40,000): applied"
    )
    lifted = ["--rate", "unlimited", "--burst", "unlimited", "--max-connections", "unlimited", "--yes"]
    assert main(["act", acting.url, "admission", *lifted]) == 0
    said = "admission fleet (rate 50/s → unlimited, burst 20 → unlimited, ceiling 40,000 → unlimited)"
    assert capsys.readouterr().out.splitlines()[0] == f"200 {said}: applied"
    records = asyncio.run(acting.call("GET", "/v1/audit", role="viewer")).json()["records"]
    assert records[-1]["outcome"] == "applied" and records[-1]["detail"] == f"{said}: applied"
