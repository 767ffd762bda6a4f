"""The write side of the fleet API for clients: actions, the two-phase dance, the drain plan, the audit.

The CLI uses it now; the console's dialogs can use the same calls. An answer is kept as it came (status and
JSON body) and classified once, here, so every client reads 409/422 the same way.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import httpx

from console.client.admin import AdminClient, FleetUnreachable, media_type, node_segment, read_json
from console.protocol import PROBLEM_TYPE_PREFIX, ThresholdsRecord

#: Every action's method and path (DESIGN.md, "The fleet API, v1"); `{node}` is the node id.
ROUTES: dict[str, tuple[str, str]] = {
    "drain": ("POST", "/v1/nodes/{node}/drain"),
    "undrain": ("POST", "/v1/nodes/{node}/undrain"),
    "rollout_start": ("POST", "/v1/rollout"),
    "rollout_halt": ("POST", "/v1/rollout/halt"),
    "rollout_resume": ("POST", "/v1/rollout/resume"),
    "admission": ("PUT", "/v1/admission"),
    "add_capacity": ("POST", "/v1/capacity"),
}


def route(action: str, node: str | None = None) -> tuple[str, str]:
    """(method, path) of an action by its name (the server's `ActionKind` values)."""
    method, path = ROUTES[action]
    if "{node}" in path:
        path = path.replace("{node}", node_segment(node))
    return method, path


class Reply(StrEnum):
    APPLIED = "applied"  # 200/202, applied
    DRY_RUN = "dry_run"  # 200, judged only
    NEEDS_CONFIRMATION = "needs_confirmation"  # 409 with a confirm_token
    BLOCKED = "blocked"  # 422 blocked by a guard
    BAD_INPUT = "bad_input"  # 422 (or 409 refusal) naming a field
    DENIED = "denied"  # 401/403


@dataclass(frozen=True)
class ActionAnswer:
    status: int
    body: dict[str, Any]
    content_type: str = "application/json"  # the media type it came as; errors: application/problem+json

    @property
    def problem_type(self) -> str:
        kind = str(self.body.get("type", ""))
        return kind.removeprefix(PROBLEM_TYPE_PREFIX)

    @property
    def reply(self) -> Reply:
        if self.status in (200, 202):
            return Reply.DRY_RUN if self.body.get("dry_run") else Reply.APPLIED
        if self.status in (401, 403):
            return Reply.DENIED
        if self.status == 409 and self.body.get("confirm_token"):
            return Reply.NEEDS_CONFIRMATION
        if self.status == 422 and self.problem_type == "blocked":
            return Reply.BLOCKED
        return Reply.BAD_INPUT

    @property
    def verdict(self) -> dict[str, Any] | None:
        verdict = self.body.get("verdict")
        return verdict if isinstance(verdict, dict) else None

    @property
    def level(self) -> str | None:
        return self.verdict.get("level") if self.verdict else None


class ActionClient(AdminClient):
    """`AdminClient` plus the mutating calls. Each call carries a fresh `Idempotency-Key`, and a call
    that fails in transport is retried once with the same key: the server applies it at most once."""

    async def send(self, method: str, path: str, body: dict[str, Any] | None = None) -> ActionAnswer:
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        for attempt in (1, 2):
            try:
                response = await self._http.request(method, path, json=body, headers=headers, timeout=30.0)
                break
            except httpx.TransportError as error:
                if attempt == 2:
                    reason = f"{type(error).__name__}: {error}"
                    connect = isinstance(error, httpx.ConnectError)
                    raise FleetUnreachable(self.base_url, reason, connect) from None
        payload = read_json(self.base_url, response)  # `NotAFleetApi` for an error that is not a problem
        body = payload if isinstance(payload, dict) else {"body": payload}
        return ActionAnswer(response.status_code, body, media_type(response))

    async def act(
        self,
        method: str,
        path: str,
        body: dict[str, Any],
        *,
        confirm: bool = False,
        typed: str | None = None,
    ) -> ActionAnswer:
        """Send an action; when it needs confirmation and the caller gave it (`confirm` for `confirm`,
        `typed` for `typed`), repeat it once with the token — the two-phase dance."""
        answer = await self.send(method, path, body)
        if answer.reply is not Reply.NEEDS_CONFIRMATION:
            return answer
        level = answer.level
        if (level == "confirm" and (confirm or typed is not None)) or (
            level == "typed" and typed is not None
        ):
            token = str(answer.body["confirm_token"])
            answer = await self.send(method, path, {**body, "confirm": {"token": token, "typed": typed}})
        return answer

    async def perform(
        self,
        action: str,
        body: dict[str, Any],
        node: str | None = None,
        *,
        confirm: bool = False,
        typed: str | None = None,
    ) -> ActionAnswer:
        """`act` by the action's name: `perform("drain", {...}, node="gw-017")` — what a dialog calls."""
        method, path = route(action, node)
        return await self.act(method, path, body, confirm=confirm, typed=typed)

    async def capacity(self) -> dict[str, Any]:
        return dict(await self._get("/v1/capacity"))

    async def thresholds(self) -> ThresholdsRecord:
        """The lines the server's guards judge with (`GET /v1/thresholds`); an older server answers 404,
        raised as `ApiError` like any refusal, and a body that does not read as the record as pydantic's
        `ValidationError`."""
        return ThresholdsRecord.model_validate(await self._get("/v1/thresholds"))

    async def drain_plan(self, node_id: str) -> dict[str, Any]:
        return dict(await self._get(f"/v1/nodes/{node_segment(node_id)}/drain-plan"))

    async def audit(self, limit: int = 100) -> dict[str, Any]:
        return dict(await self._get(f"/v1/audit?limit={limit}"))
