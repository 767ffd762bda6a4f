"""Running a full-screen app from a command: its exit status is the app's, so a console that died on an
error does not exit 0 (the shell, a wrapper script or systemd saw a crash as success)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (commands import Textual only when they run an app)
    from textual.app import App


def run_app(app: App[Any], *, headless: bool = False) -> int:
    """Run `app` to its end; 0, or the app's non-zero return code (1 after an unhandled error, whose
    traceback Textual prints once the terminal is restored)."""
    app.run(headless=headless)
    return app.return_code or 0
