"""An error repeats what was given, but not all of a long text (an --override-reason of 2,000 characters)."""

from console.errors import QUOTED_CHARS, InputError, quoted


def test_a_long_text_is_repeated_by_its_start_and_its_length():
    given = "x" * 2000
    message = str(InputError("--override-reason", given, "at most 1000 characters"))
    assert message == (
        f"--override-reason: {'x' * QUOTED_CHARS!r}… (2,000 characters) is not allowed; "
        "expected at most 1000 characters"
    )


def test_a_long_path_is_repeated_whole():
    path = "/tmp/pytest-of-root/pytest-1234/test_broken_toml_names_the_file0/user/stormdeck/config.toml"
    assert quoted(path) == repr(path)


def test_short_values_are_repeated_whole():
    assert quoted("x" * QUOTED_CHARS) == repr("x" * QUOTED_CHARS)
    assert quoted(3.5) == "3.5"
    assert quoted([5, 2]) == "[5, 2]"


def test_a_long_list_is_repeated_by_its_first_items_and_its_length():
    """`PUT /v1/admission` naming 3,000 unknown nodes came back as all 3,000 in the refusal."""
    given = [f"zz-{i}" for i in range(3000)]
    said = quoted(given)
    assert said.startswith("['zz-0', 'zz-1', ") and said.endswith(", …] (3,000 items)")
    assert len(said) < QUOTED_CHARS + 40


def test_a_number_that_kept_its_text_is_repeated_as_typed():
    """An option read with `typed_float`/`typed_int` is said as typed by any check that refuses it."""
    from console.cli.checks import typed_float, typed_int

    assert quoted(typed_float("-1.50")) == "'-1.50'"
    assert quoted(typed_int("007")) == "'007'"
    assert quoted([typed_float("1"), typed_float("1e9")]) == "['1', '1e9']"
    assert str(InputError("--rate", typed_float("1e400"), "a number in [0, 1]")) == (
        "--rate: '1e400' is not allowed; expected a number in [0, 1]"
    )
