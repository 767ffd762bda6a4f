"""FleetSnapshot.of_frame: the snapshot of a frame's moment, built without parsing anything."""

from __future__ import annotations

import ast

import pytest

from console.protocol import FleetSnapshot, Source
from tests.fleet_builders import frame


def test_a_snapshot_of_a_frame_shares_its_nodes_and_parses_no_source(monkeypatch: pytest.MonkeyPatch) -> None:
    """Left to model_construct, `alarms`' default_factory made pydantic inspect `list`'s signature, which
    CPython 3.11 does with `ast.parse` — on every snapshot, in the server's thread, where it raced a
    concurrent parse (Hypothesis's, in the schemathesis test) on 3.11's shared AST state: a SystemError
    in CI."""

    parsed: list[object] = []
    real_parse = ast.parse

    def counting(*args: object, **kwargs: object) -> ast.AST:
        parsed.append(args[0])
        return real_parse(*args, **kwargs)  # type: ignore[arg-type]

    moment = frame(7.0, epoch="e")
    monkeypatch.setattr(ast, "parse", counting)
    snapshot = FleetSnapshot.of_frame(moment, "fleet", Source.SIMULATOR)
    monkeypatch.undo()
    assert parsed == []
    assert (
        snapshot.nodes is moment.nodes
        and snapshot.alarms == []
        and (snapshot.seq, snapshot.epoch) == (7, "e")
    )
    assert snapshot.admission.rate_per_s is None and snapshot.api_version == "v1"
