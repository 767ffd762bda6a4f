"""The admin client: the fleet API's HTTP side over httpx. Problems become typed errors, not tracebacks."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from console.errors import InputError, StormdeckError
from console.protocol import FleetSnapshot


def node_segment(node_id: str | None) -> str:
    """A node id as one path segment: checked non-empty, and escaped, so `gw-001#x` or `a/b` cannot reach
    another resource (httpx drops what follows a `#`: the node's detail would answer a drain plan)."""
    if node_id is None or not node_id.strip():
        raise InputError("NODE", node_id or "", "a node id, e.g. gw-017")
    return quote(node_id, safe="")


class ApiError(StormdeckError):
    """The fleet API said no; `status` and `detail` come from its problem+json. Exit status as `act`'s:
    2 for the caller's input (422, 404, 409…), 1 for auth (401, 403) and the server's own faults."""

    def __init__(self, status: int, detail: str, message: str | None = None) -> None:
        self.status = status
        self.detail = detail
        self.exit_code = 2 if 400 <= status < 500 and status not in (401, 403) else 1
        super().__init__(message or f"fleet API answered {status}: {detail}")


class FleetUnreachable(ApiError):
    """Nothing answered (refused, timed out, no such host): status 0, a transport error (exit 1)."""

    def __init__(self, url: str, reason: str, connect: bool = False) -> None:
        # `connect`: nothing took the connection (refused, no such host) — what attach and record call
        # a fleet never reached, told with what to check.
        ask = " — is the server running?" if connect else ""
        super().__init__(0, reason, f"cannot reach the fleet API at {url}: {reason}{ask}")


class NotAFleetApi(ApiError):
    """Something answered, but not with JSON: another web server on that port, or a proxy's error page.
    Its body (an HTML page) says nothing a user can act on; what answered does (exit 1)."""

    def __init__(self, url: str, response: httpx.Response) -> None:
        kind = response.headers.get("content-type", "no content type").split(";")[0].strip()
        detail = f"HTTP {response.status_code} {kind}"
        super().__init__(response.status_code, detail, f"{url} is not a stormdeck fleet API ({detail})")
        self.exit_code = 1


PROBLEM_MEDIA_TYPE = "application/problem+json"


def media_type(response: httpx.Response) -> str:
    return response.headers.get("content-type", "").split(";")[0].strip().lower()


def read_json(url: str, response: httpx.Response) -> Any:
    """The answer's JSON, or `NotAFleetApi`: every answer of the fleet API is JSON, and every error it
    answers is problem+json (console/server/problems.py). An error in plain JSON is another JSON API —
    a gateway node's admin port answers `404 {"detail": "Not Found"}`, which read as the fleet's bad
    input (`404 bad_input: Not Found`, exit 2; found in review)."""
    try:
        payload = response.json()
    except ValueError:
        raise NotAFleetApi(url, response) from None
    if response.is_error and media_type(response) != PROBLEM_MEDIA_TYPE:
        raise NotAFleetApi(url, response)
    return payload


class AdminClient:
    def __init__(self, base_url: str, token: str, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.base_url = base_url if "://" in base_url else f"http://{base_url}"
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
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
            reason = f"{type(error).__name__}: {error}"
            raise FleetUnreachable(self.base_url, reason, isinstance(error, httpx.ConnectError)) from None
        payload = read_json(self.base_url, response)
        if response.status_code >= 400:
            detail = payload.get("detail") if isinstance(payload, dict) else None
            raise ApiError(response.status_code, str(detail or response.reason_phrase))
        return payload

    async def fleet(self) -> FleetSnapshot:
        return FleetSnapshot.model_validate(await self._get("/v1/fleet"))

    async def node(self, node_id: str) -> dict[str, Any]:
        """One node with its recent history, as the server sends it (the shape beyond NodeStatus is open)."""
        return dict(await self._get(f"/v1/nodes/{node_segment(node_id)}"))
