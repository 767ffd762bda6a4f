"""`python -m console.ui.screenshots [DIR]`: regenerate screenshots/*.svg from the real app, deterministic."""

from __future__ import annotations

import asyncio
import sys
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
    args = sys.argv[1:] if argv is None else argv
    directory = Path(args[0]) if args else Path("screenshots")
    for path in asyncio.run(shoot_all(directory)):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
