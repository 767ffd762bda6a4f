"""A console that dies on an error exits non-zero: `stormdeck replay` exited 0 after a traceback."""

from __future__ import annotations

from textual.app import App

from console.cli.screen import run_app


class _Crashing(App[None]):
    def on_mount(self) -> None:
        raise RuntimeError("a defect in a widget")


class _Quitting(App[None]):
    def on_mount(self) -> None:
        self.exit()


def test_an_app_that_ends_on_an_unhandled_error_gives_a_failing_exit_status() -> None:
    assert run_app(_Crashing(), headless=True) == 1


def test_an_app_that_is_quit_gives_0() -> None:
    assert run_app(_Quitting(), headless=True) == 0
