"""`python -m console.ui.screenshots [DIR]`: regenerate screenshots/*.svg from the real app, deterministic."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from console.ui.scenes import SCENES, Scene, scene_app


async def shoot(scene: Scene, directory: Path) -> Path:
    app = scene_app(scene)
    async with app.run_test(headless=True, size=scene.size) as pilot:
        await pilot.pause()
        for key in scene.keys:
            await pilot.press(key)
            await pilot.pause()
        app.refresh_views()
        await pilot.pause()
        path = directory / f"{scene.name}.svg"
        app.save_screenshot(filename=path.name, path=str(directory))
    return path


async def shoot_all(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    return [await shoot(scene, directory) for scene in SCENES]


def main(argv: list[str] | None = None) -> int:
    # argparse, so `--help` is help and not a directory to fill (it made `./--help/` and wrote into it).
    parser = argparse.ArgumentParser(
        prog="python -m console.ui.screenshots",
        description="Regenerate the README's screenshots from the real app: seeded scenes, deterministic "
        "(the same SVGs on every run).",
        epilog="example: python -m console.ui.screenshots /tmp/shots",
    )
    parser.add_argument(
        "directory",
        nargs="?",
        type=Path,
        default=Path("screenshots"),
        metavar="DIR",
        help="where to write the SVGs, made if missing (default: ./screenshots)",
    )
    directory = parser.parse_args(argv).directory
    for path in asyncio.run(shoot_all(directory)):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
