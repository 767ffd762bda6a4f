"""Bearer-token checks for HTTP routes and the WebSocket stream (DESIGN.md, "Auth").

No token or an unknown one → 401; a token whose role is too low → 403. Both as problem+json; the stream
answers its handshake the same way (a denial response), so a client sees the same problem either way.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import Depends, Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.requests import HTTPConnection

from console.server.problems import ApiProblem
from console.server.tokens import Principal, Role, TokenRegistry

_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="stormdeck"'}

# Declares the scheme in /openapi.json; the checking itself is `authenticate`, shared with the stream.
_bearer_scheme = HTTPBearer(
    auto_error=False, description="a token from the server's token file: `ROLE TOKEN [NAME]` lines"
)


def authenticate(connection: HTTPConnection, tokens: TokenRegistry, needed: Role) -> Principal:
    """The principal behind a request's `Authorization: Bearer` header, or an `ApiProblem` (401/403)."""
    header = connection.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise ApiProblem(
            401,
            "authorization: a bearer token is required (`Authorization: Bearer TOKEN`); the server "
            "printed where its token file is",
            field="authorization",
            headers=_CHALLENGE,
        )
    principal = tokens.lookup(token)
    if principal is None:
        raise ApiProblem(
            401,
            "authorization: the bearer token is not one this server accepts",
            field="authorization",
            headers=_CHALLENGE,
        )
    if principal.role < needed:
        raise ApiProblem(
            403,
            f"authorization: this needs the {needed.label} role or higher; "
            f"the token of {principal.name!r} has {principal.role.label}",
            field="authorization",
        )
    return principal


class Require:
    """A FastAPI dependency admitting tokens of `role` or higher (a class, so `TokenFirstRoute` can read
    the role a route needs)."""

    def __init__(self, role: Role) -> None:
        self.role = role

    async def __call__(
        self, request: Request, _: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer_scheme)]
    ) -> Principal:
        return authenticate(request, request.app.state.tokens, self.role)


def require(role: Role) -> Require:
    """A FastAPI dependency admitting tokens of `role` or higher."""
    return Require(role)


def needed_role(dependant: Dependant) -> Role | None:
    """The highest role any `Require` among `dependant`'s dependencies (at any depth) asks for."""
    roles = [
        dependency.call.role if isinstance(dependency.call, Require) else needed_role(dependency)
        for dependency in dependant.dependencies
    ]
    return max((role for role in roles if role is not None), default=None)


class TokenFirstRoute(APIRoute):
    """A route that checks the caller's token (and role) before FastAPI reads its body.

    FastAPI reads and parses a route's body before it runs the route's dependencies, the token check among
    them: a caller without a token who sent a malformed body got a 422 describing it, not a 401, and so
    learned how the body is read without being anyone. The `BodyLimit` middleware still comes first (413).
    The role is read from the route's own and its router's `require(...)` (an `include_router(dependencies=
    ...)` is not seen here; the app adds none)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        role = needed_role(self.dependant)
        if role is None:
            return handler

        async def token_first(request: Request) -> Response:
            authenticate(request, request.app.state.tokens, role)
            return await handler(request)

        return token_first
