"""Bearer-token checks for HTTP routes and the WebSocket stream (DESIGN.md, "Auth").

No token or an unknown one → 401; a token whose role is too low → 403. Both as problem+json; the stream
answers its handshake the same way (a denial response), so a client sees the same problem either way.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import Depends, Request
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


def require(role: Role) -> Callable[[Request], Coroutine[Any, Any, Principal]]:
    """A FastAPI dependency admitting tokens of `role` or higher."""

    async def dependency(
        request: Request, _: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer_scheme)]
    ) -> Principal:
        return authenticate(request, request.app.state.tokens, role)

    dependency.__name__ = f"require_{role.label}"
    return dependency
