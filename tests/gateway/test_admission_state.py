"""The admission an operator set survives a restart of the controller: kept beside the audit log, taken up
at start and said so, given again to a node found on other settings and to every node's new process; a
state file it cannot read is named, not a traceback."""

from __future__ import annotations

import pytest

from console.gateway.admission_state import AdmissionRecord, AdmissionStateFile
from console.gateway.controller import Controller
from console.gateway.nodes_file import NodeEntry
from console.protocol import ActionKind, AdmissionRequest, AdmissionSettings
from console.server.actions import FleetAction
from tests.gateway.conftest import TOKEN, node_config, wait_for
from tests.gateway.test_admission_restart import _new_process, _restarted

pytestmark = pytest.mark.timeout(60)

FLEET_WIDE = AdmissionRequest(rate_per_s=400, burst=40, retry_after_s=(2, 20))
ONLY_C = AdmissionRequest(rate_per_s=100, burst=10, retry_after_s=(2, 20), nodes=["c"])
FLEET_WORDS = "rate 400/s per node, burst 40, Retry-After 2–20 s"
C_WORDS = "rate 100/s per node, burst 10, Retry-After 2–20 s"


def _shown(controller: Controller) -> tuple[float | None, list[tuple[float | None, list[str] | None]]]:
    """The fleet's admission rate and its per-node overrides, as a snapshot shows them."""
    snapshot = controller.snapshot()
    overrides = [(o.rate_per_s, o.nodes) for o in snapshot.admission_overrides or []]
    return snapshot.admission.rate_per_s, overrides


async def test_admission_set_before_a_controller_restart_is_given_again_after_it(
    start_node, tmp_path
) -> None:
    """The controller kept the fleet's admission and the per-node overrides in memory only: restarted (a
    deploy, a crash) during a storm, it showed the nodes' own settings as the fleet's, and a node restarted
    after it came back unlimited — nothing given again, nothing said."""
    a = await start_node(node_config("a"))
    b = await start_node(node_config("b"))
    c = await start_node(node_config("c"))
    entries = [NodeEntry(n, node.admin_url) for n, node in (("a", a), ("b", b), ("c", c))]
    state = AdmissionStateFile.beside(tmp_path / "audit.jsonl")
    first = Controller(entries, TOKEN, admission_state=state)
    await first.start()
    try:
        await first.apply(FleetAction(ActionKind.ADMISSION, FLEET_WIDE))
        await first.apply(FleetAction(ActionKind.ADMISSION, ONLY_C))
    finally:
        await first.close()
    # No controller runs: b's supervisor restarts it meanwhile, on its command-line settings (unlimited).
    b = await _restarted(start_node, b, "b")
    assert b.node.admission.settings.rate_per_s is None

    second = Controller(entries, TOKEN, admission_state=AdmissionStateFile(state.path))
    try:
        # (a) What was set shows before any node has answered, and the start says where it came from.
        assert _shown(second) == (400, [(100, ["c"])])
        (restored,) = [e for e in second.drain_events() if e.kind == "admission"]
        assert f"restored from {state.path}" in restored.message, restored.message
        assert f"fleet admission {FLEET_WORDS}" in restored.message, restored.message
        assert f"c: {C_WORDS}" in restored.message, restored.message
        await second.start()
        # (b) b, found on its start-up settings, is given the fleet's; a and c run what was set: not asked.
        await wait_for(
            lambda: (
                all(link.epoch for link in second.links.values())
                and b.node.admission.settings.rate_per_s == 400
            ),
            10,
            "every node's first frame, b on the fleet's settings",
        )
        (given,) = [e for e in second.drain_events() if e.kind == "admission"]
        assert given.node == "b", given
        assert "b runs unlimited, not what was set for it before this controller restarted" in given.message
        assert f"given the fleet's again: {FLEET_WORDS}" in given.message, given.message
        assert _shown(second) == (400, [(100, ["c"])])
        assert c.node.admission.settings.rate_per_s == 100

        # A node restarted after the controller's restart is given the fleet's again, said as ever.
        old_epoch = second.links["a"].epoch
        a = await _restarted(start_node, a, "a")
        await wait_for(lambda: _new_process(second, "a", old_epoch), 15, "a back as a new process")
        assert a.node.admission.settings.rate_per_s == 400
        (back,) = [e for e in second.drain_events() if e.kind == "admission"]
        assert back.message == (
            f"a came back as a new process on its start-up settings (unlimited): given the fleet's again: "
            f"{FLEET_WORDS}"
        ), back.message
        assert _shown(second) == (400, [(100, ["c"])])
    finally:
        await second.close()


async def test_every_admission_change_is_kept_and_a_fleet_change_clears_the_overrides(
    start_node, tmp_path
) -> None:
    """A fleet-wide change replaces every node's settings, per-node overrides included: the file must not
    keep an override the fleet no longer runs (the next controller would give it back)."""
    b = await start_node(node_config("b"))
    c = await start_node(node_config("c"))
    state = AdmissionStateFile(tmp_path / "audit.admission.json")
    controller = Controller(
        [NodeEntry("b", b.admin_url), NodeEntry("c", c.admin_url)], TOKEN, admission_state=state
    )
    await controller.start()
    try:
        assert state.load() is None  # nothing set: nothing kept

        def kept() -> tuple[float | None, dict[str, float | None]]:
            record = state.load()
            assert record is not None
            fleet = record.fleet_settings()
            return (
                fleet.rate_per_s if fleet is not None else None,
                {node: s.rate_per_s for node, s in record.override_settings().items()},
            )

        await controller.apply(FleetAction(ActionKind.ADMISSION, ONLY_C))
        assert kept() == (None, {"c": 100})
        await controller.apply(FleetAction(ActionKind.ADMISSION, FLEET_WIDE))
        assert kept() == (400, {})
        await controller.apply(FleetAction(ActionKind.ADMISSION, ONLY_C))
        assert kept() == (400, {"c": 100})
        later = AdmissionRequest(rate_per_s=300, burst=30, retry_after_s=(2, 20))
        await controller.apply(FleetAction(ActionKind.ADMISSION, later))
        assert kept() == (300, {})
        assert sorted(p.name for p in tmp_path.iterdir()) == ["audit.admission.json"]  # no temporary left
    finally:
        await controller.close()


async def test_admission_not_kept_is_said_once(start_node, tmp_path) -> None:
    b = await start_node(node_config("b"))
    (tmp_path / "state").mkdir()
    state = AdmissionStateFile(tmp_path / "state" / "audit.admission.json")
    controller = Controller([NodeEntry("b", b.admin_url)], TOKEN, admission_state=state)
    # Its directory taken away once the controller has started (read at start, nothing there): no file
    # can be written there now.
    (tmp_path / "state").rmdir()
    (tmp_path / "state").write_text("")
    await controller.start()
    try:
        await controller.apply(FleetAction(ActionKind.ADMISSION, FLEET_WIDE))
        await controller.apply(FleetAction(ActionKind.ADMISSION, FLEET_WIDE))
        assert b.node.admission.settings.rate_per_s == 400  # applied all the same
        said = [e.message for e in controller.drain_events() if e.kind == "admission"]
        assert len(said) == 1, said
        assert said[0].startswith(f"admission not kept in {state.path} ("), said
        assert "a controller restarted now would not give it again to nodes' new processes" in said[0]
    finally:
        await controller.close()


async def test_an_override_of_a_node_no_longer_in_the_nodes_file_is_dropped_and_said(
    start_node, tmp_path
) -> None:
    b = await start_node(node_config("b"))
    state = AdmissionStateFile(tmp_path / "audit.admission.json")
    state.save(
        AdmissionRecord.of(
            "loopback",
            None,
            {
                "gone": AdmissionSettings(
                    rate_per_s=100, burst=10, max_connections=None, retry_after_s=(2, 20)
                )
            },
            saved_unix_s=1000.0,
        )
    )
    controller = Controller([NodeEntry("b", b.admin_url)], TOKEN, admission_state=state)
    try:
        (said,) = [e.message for e in controller.drain_events() if e.kind == "admission"]
        assert "dropped gone's (not in the nodes file)" in said, said
        assert _shown(controller)[1] == []
    finally:
        await controller.close()


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b'{"version": 1, "fleet_admission": {"rate_pe', "is not JSON"),
        (b'{"version": 2, "fleet": "loopback"}', "has version 2; this controller reads version 1"),
        (
            b'{"version": 1, "fleet": "loopback", "saved_unix_s": 1000, '
            b'"fleet_admission": {"rate_per_s": -5, "retry_after_s": [1, 30]}}',
            "is damaged: fleet_admission.rate_per_s: Input should be greater than 0",
        ),
    ],
    ids=["not-json", "version", "out-of-range"],
)
def test_an_admission_state_file_it_cannot_read_is_named(tmp_path, content: bytes, said: str) -> None:
    state = AdmissionStateFile(tmp_path / "loopback.admission.json")
    state.path.write_bytes(content)
    with pytest.raises(Exception) as raised:
        Controller([NodeEntry("b", "http://127.0.0.1:9")], TOKEN, admission_state=state)
    message = str(raised.value)
    assert f"admission state file {state.path}: {said}" in message, message
    assert "move the file aside" in message
