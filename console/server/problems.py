"""RFC 9457 problem details for every error the fleet API answers.

Every error leaves as `application/problem+json` whose `detail` names the field, the value given and
what is allowed, whether it came from our own checks (`InputError`, `ApiProblem`), FastAPI's request
validation, or an unknown path.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, get_args

import annotated_types
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from console.errors import InputError, quoted
from console.protocol import PROBLEM_TYPE_PREFIX, Problem
from console.protocol.requests import Window, whole_number

PROBLEM_MEDIA_TYPE = "application/problem+json"
#: Every 422 for bad input is `…:invalid`, whether FastAPI's validation, our own checks or the action desk
#: found it, so a script tests one type.
INVALID = PROBLEM_TYPE_PREFIX + "invalid"

_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    422: "Invalid input",
    426: "Upgrade required",
    500: "Internal error",
}


class ApiProblem(Exception):
    """Raised by a route to answer with a problem+json."""

    def __init__(
        self,
        status: int,
        detail: str,
        field: str | None = None,
        title: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.problem = Problem(
            type=INVALID if status == 422 else "about:blank",
            title=title or _TITLES.get(status, "Error"),
            status=status,
            detail=detail,
            field=field,
        )
        self.headers = headers


def problem_response(
    problem: Problem, request: Request | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    if request is not None and problem.instance is None:
        problem = problem.model_copy(update={"instance": request.url.path})
    return JSONResponse(
        problem.model_dump(mode="json", exclude_none=True),
        status_code=problem.status,
        media_type=PROBLEM_MEDIA_TYPE,
        headers=headers,
    )


def _field_name(location: tuple[Any, ...]) -> str:
    # ("body", "speed") → "speed"; ("query", "since") → "since"; the first element says where, not what.
    # An element of a pair or list names the field it is in: ("body", "retry_after_s", 1) → retry_after_s;
    # a body that is not JSON, ("body", 20) — the character position — is "body".
    if not location:
        return "body"
    parts = [str(part) for part in location[1:] if not isinstance(part, int)]
    return ".".join(parts) or str(location[0])


def _model_of(annotation: Any) -> type[BaseModel] | None:
    # `ActionRequest | None` (an optional body, an optional `confirm`): the model in it.
    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def body_model(request: Request) -> type[BaseModel] | None:
    """The model of the body the matched route reads (None for a route without one)."""
    field = getattr(request.scope.get("route"), "body_field", None)
    return _model_of(field.field_info.annotation) if field is not None else None


def _model_at(model: type[BaseModel] | None, path: list[str]) -> type[BaseModel] | None:
    """The model holding the fields at a dotted path (confirm → ConfirmAnswer)."""
    for name in path:
        if model is None or name not in model.model_fields:
            return None
        model = _model_of(model.model_fields[name].annotation)
    return model


def _query_field(request: Request, name: str) -> FieldInfo | None:
    """The declaration of the matched route's query parameter `name` (GET /v1/audit's `limit`)."""
    dependant = getattr(request.scope.get("route"), "dependant", None)
    params = getattr(dependant, "query_params", ())
    return next((param.field_info for param in params if name in (param.name, param.alias)), None)


def _allowed(model: type[BaseModel] | None, path: list[str], query: FieldInfo | None = None) -> str:
    """The allowed range of a body field, from its own model's constraints and description — the same
    name may mean another thing in another body (a drain's rate_per_s closes, admission's admits) — or
    of the query parameter `query` declares."""
    holder = _model_at(model, path[:-1])
    info = query or (holder.model_fields.get(path[-1]) if holder is not None and path else None)
    if info is None:
        return ""
    allowed = next((item.allowed() for item in info.metadata if isinstance(item, Window)), "")
    allowed = allowed or _range_text(info.metadata)
    if allowed and info.description:
        allowed = f"{allowed} ({info.description})"
    return allowed


def allowed_range(model: type[BaseModel], path: list[str]) -> str:
    """What a body field of `model` allows, as the fleet API's 422s say it ("(0, 1000000000] (closes per
    second)"), for a server that validates a body itself (a gateway node's admin API); "" when unknown."""
    return _allowed(model, path)


def _range_text(metadata: list[Any]) -> str:
    low = high = ""
    for item in metadata:
        if isinstance(item, annotated_types.Gt):
            low = f"({_number(item.gt)}"
        elif isinstance(item, annotated_types.Ge):
            low = f"[{_number(item.ge)}"
        elif isinstance(item, annotated_types.Lt):
            high = f"{_number(item.lt)})"
        elif isinstance(item, annotated_types.Le):
            high = f"{_number(item.le)}]"
    if low and high:
        return f"{low}, {high}"
    if low:
        return f"{'>' if low[0] == '(' else '≥'} {low[1:]}"
    if high:
        return f"{'<' if high[-1] == ')' else '≤'} {high[:-1]}"
    return ""


def _number(value: Any) -> str:
    # 1e9 as 1000000000, not 1000000000.0 (nor 1e+09): the bound as a user would type it.
    return str(whole_number(value))


def _json_position(error: RequestValidationError, position: int) -> str:
    text = error.body if isinstance(error.body, str) else ""
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return f"line {line} column {column} (char {position})"


def _validation_detail(
    error: dict[str, Any], model: type[BaseModel] | None, raised: Exception, request: Request
) -> str:
    location = tuple(error.get("loc", ()))
    field = _field_name(location)
    given = error.get("input")
    if error.get("type") == "json_invalid":  # FastAPI's location is ("body", character position)
        assert isinstance(raised, RequestValidationError)
        reason = (error.get("ctx") or {}).get("error", "invalid JSON")
        position = location[-1] if location and isinstance(location[-1], int) else 0
        return (
            f"body: not valid JSON ({reason} at {_json_position(raised, position)}); expected a JSON object"
        )
    path = [str(part) for part in location[1:] if not isinstance(part, int)]
    if error.get("type") == "extra_forbidden" and path:
        holder = _model_at(model, path[:-1])
        known = list(holder.model_fields) if holder is not None else []
        close = difflib.get_close_matches(path[-1], known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"{field}: unknown field (got {given!r}); allowed fields: {', '.join(known)}{hint}"
    if error.get("type") == "missing" and location == ("body",) and model is not None:
        required = [name for name, info in model.model_fields.items() if info.is_required()]
        return f"body: required; expected a JSON object with {', '.join(required) or 'its fields'} (see /openapi.json)"
    query = _query_field(request, path[-1]) if location[:1] == ("query",) and path else None
    return describe_invalid(error, field, _allowed(model, path, query))


def describe_invalid(error: Any, field: str, allowed: str) -> str:
    """One pydantic error as "FIELD: what is wrong (got VALUE); allowed: RANGE" — the fleet API's words,
    and a gateway node's (the controller hands a node's refusal on to the operator)."""
    location = tuple(error.get("loc", ()))
    given = error.get("input")
    message = error.get("msg", "invalid")
    shown = "" if isinstance(given, dict) or given is None else f" (got {quoted(given)})"
    if error.get("type") == "missing" and location and isinstance(location[-1], int):
        # An item short of a list (`hint_ms: [1000]`, its input the list): pydantic's "Field required"
        # read as if the field itself were left out.
        index = location[-1]
        item = ("min", "max")[index] if allowed.startswith("[min, max]") and index < 2 else f"item {index}"
        message = f"{item} is missing"
    return f"{field}: {message}{shown}" + (f"; allowed: {allowed}" if allowed else "")


def _unparsed_body(errors: list[Any]) -> bool:
    """FastAPI parses a body as JSON only when its Content-Type says so; under another (curl -d sends a
    form) the model is handed the raw bytes, and pydantic refuses "a valid dictionary"."""
    return any(tuple(e.get("loc", ())) == ("body",) and isinstance(e.get("input"), bytes) for e in errors)


def validation_problem(
    request: Request, error: RequestValidationError, said: Mapping[str, str] | None = None
) -> Problem:
    """A request the models refused, in the API's words — what the caller is told, and what the audit log
    records of the attempt (console/server/routes/actions.py). `said`: a field's refusal in the words of
    the one who knows its real range (add capacity's `count` in the fleet's room), in place of the
    model's."""
    errors = list(error.errors())
    if _unparsed_body(errors):
        sent = request.headers.get("content-type", "")
        return Problem(
            type=INVALID,
            title=_TITLES[422],
            status=422,
            detail=f"content-type: the body was sent as {sent!r}, not read as JSON; expected "
            "Content-Type: application/json (curl: -H 'Content-Type: application/json')",
            field="content-type",
        )
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    model = body_model(request)
    said = said or {}
    details = [
        said.get(_field_name(tuple(item.get("loc", ())))) or _validation_detail(item, model, error, request)
        for item in errors
    ]
    detail = "; ".join(details) or "invalid request"
    return Problem(
        type=INVALID,
        title=_TITLES[422],
        status=422,
        detail=detail,
        field=_field_name(tuple(first.get("loc", ()))),
    )


async def _on_validation_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    return problem_response(validation_problem(request, error), request)


async def _on_input_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, InputError)
    problem = Problem(type=INVALID, title=_TITLES[422], status=422, detail=str(error), field=error.field)
    return problem_response(problem, request)


async def _on_api_problem(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, ApiProblem)
    return problem_response(error.problem, request, error.headers)


async def _on_http_exception(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, StarletteHTTPException)
    detail = error.detail if isinstance(error.detail, str) else str(error.detail)
    status, headers = error.status_code, getattr(error, "headers", None)
    path = request.url.path
    if status == 404 and _is_websocket_path(request):
        # curl or a browser on the stream: OpenAPI lists no WebSocket, so "no such path" would mislead.
        status, headers = 426, {"Upgrade": "websocket", "Connection": "Upgrade"}
        detail = (
            f"{path} is a WebSocket: connect with ws:// and the same Authorization header "
            "(`stormdeck attach URL` does: a hello, then a frame a second and events; `?since=SEQ&epoch=E` resumes)"
        )
    elif status == 404 and detail == "Not Found":
        detail = f"no such path {path!r}; the API's paths are listed at /openapi.json"
    elif status == 405 and detail == "Method Not Allowed":
        allowed = (headers or {}).get("allow") or (headers or {}).get("Allow") or "see /openapi.json"
        detail = f"method {request.method} is not allowed on {path}; allowed: {allowed}"
    problem = Problem(title=_TITLES.get(status, "Error"), status=status, detail=detail)
    return problem_response(problem, request, headers)


def _is_websocket_path(request: Request) -> bool:
    """Whether the app would take this request's path as a WebSocket (Starlette's own matching)."""
    scope = {**request.scope, "type": "websocket"}
    return any(route.matches(scope)[0] is Match.FULL for route in request.app.routes)


async def _on_unexpected(request: Request, error: Exception) -> JSONResponse:
    # Starlette still logs the traceback (and re-raises for the server); the client gets a problem, not
    # a text/plain page — e.g. an audit log that cannot be written (a full disk): nothing was applied.
    problem = Problem(
        title=_TITLES[500],
        status=500,
        detail=f"the server failed ({type(error).__name__}); nothing was applied; its log has the details",
    )
    return problem_response(problem, request)


def install_problem_handlers(app: FastAPI) -> None:
    app.add_exception_handler(Exception, _on_unexpected)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(InputError, _on_input_error)
    app.add_exception_handler(ApiProblem, _on_api_problem)
    app.add_exception_handler(StarletteHTTPException, _on_http_exception)


#: For OpenAPI: the problem+json responses a route may give.
def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {
        status: {
            "model": Problem,
            "description": _TITLES.get(status, "Error"),
            "content": {PROBLEM_MEDIA_TYPE: {}},
        }
        for status in statuses
    }
