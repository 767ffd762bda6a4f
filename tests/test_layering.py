"""DESIGN.md, "The parts and the flow of data": the console talks to a fleet API only — "nothing in the
console may reach into simulator objects: everything crosses the protocol". So the console's packages
(client, model, ui) import nothing of the simulator, the server, the gateway fleet or the command line
(which sits above them all); what they share with those sides lives in console/protocol.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CONSOLE = Path(__file__).resolve().parent.parent / "console"
#: The console's own packages, and what each must not import.
CONSOLE_SIDE = ("client", "model", "ui")
OTHER_SIDES = ("console.sim", "console.server", "console.gateway", "console.cli", "console.bench")


def imports_of(path: Path) -> set[str]:
    """Every absolute module name `path` imports, at the top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_imports_of_sees_nested_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import os\ndef f():\n    from console.sim.engine import Simulation\n")
    assert imports_of(module) == {"os", "console.sim.engine"}


@pytest.mark.parametrize("package", CONSOLE_SIDE)
def test_the_console_side_crosses_only_the_protocol(package: str) -> None:
    crossings = sorted(
        f"{path.relative_to(CONSOLE.parent)} imports {name}"
        for path in (CONSOLE / package).rglob("*.py")
        for name in imports_of(path)
        if any(name == side or name.startswith(side + ".") for side in OTHER_SIDES)
    )
    assert crossings == []
