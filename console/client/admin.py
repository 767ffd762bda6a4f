"""The admin client: the fleet API's HTTP side over httpx. Problems become typed errors, not tracebacks."""

from __future__ import annotations

import contextlib
from typing import Any

import httpx

from console.errors import StormdeckError
from console.protocol import FleetSnapshot


class ApiError(StormdeckError):
    """The fleet API said no; `status` and `detail` come from its problem+json."""

    def __init__(self, status: int, detail: str) -> None:
        self.status = status
        self.detail = detail
        super().__init__(f"fleet API answered {status}: {detail}")


class AdminClient:
    def __init__(self, base_url: str, token: str, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._http = httpx.AsyncClient(
            base_url=base_url if "://" in base_url else f"http://{base_url}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=5.0,
            transport=transport,
        )

    async def __aenter__(self) -> AdminClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _get(self, path: str) -> Any:
        try:
            response = await self._http.get(path)
        except httpx.HTTPError as error:
            raise ApiError(0, f"{type(error).__name__}: {error}") from None
        if response.status_code >= 400:
            detail = response.reason_phrase
            if "json" in response.headers.get("content-type", ""):
                with contextlib.suppress(ValueError):
                    detail = str(response.json().get("detail", detail))
            raise ApiError(response.status_code, detail)
        return response.json()

    async def fleet(self) -> FleetSnapshot:
        return FleetSnapshot.model_validate(await self._get("/v1/fleet"))

    async def node(self, node_id: str) -> dict[str, Any]:
        """One node with its recent history, as the server sends it (the shape beyond NodeStatus is open)."""
        return dict(await self._get(f"/v1/nodes/{node_id}"))
