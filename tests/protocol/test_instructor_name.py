"""Who injected an event: one rule for the server that says it and the report that reads it back."""

from __future__ import annotations

import pytest

from console.protocol import UNNAMED_INSTRUCTOR, named_instructor
from console.record.injections import instructor
from console.server.simulator import injector


@pytest.mark.parametrize(
    ("actor", "named"),
    [
        ("dana", "dana"),
        (UNNAMED_INSTRUCTOR, None),  # `drill --serve`'s own admin token: no one in particular
        ("instructor", None),
        ("", None),
        (None, None),
        (7, None),  # not a name: an event's data is anyone's JSON
    ],
)
def test_an_actor_names_an_instructor_unless_it_is_the_default_one(actor: object, named: str | None) -> None:
    assert named_instructor(actor) == named


@pytest.mark.parametrize("actor", ["dana", UNNAMED_INSTRUCTOR, ""])
def test_the_server_and_the_report_agree_on_who_is_named(actor: str) -> None:
    """The stream's words (with the role) and the report's (without) name the same instructor, or none."""
    said = injector({"actor": actor, "role": "admin"}) if actor else injector({})
    read = instructor(actor)
    if named_instructor(actor):
        assert said == f"instructor {actor} (admin)" and read == f"instructor {actor}"
    else:
        assert said in ("instructor (admin)", "instructor") and read == "the instructor"
