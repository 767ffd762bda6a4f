"""RFC 9457 problem details for every error the fleet API answers.

Every error leaves as `application/problem+json` whose `detail` names the field, the value given and
what is allowed, whether it came from our own checks (`InputError`, `ApiProblem`), FastAPI's request
validation, or an unknown path.
"""

from __future__ import annotations

from typing import Any

import annotated_types
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from console.errors import InputError
from console.protocol import Problem

PROBLEM_MEDIA_TYPE = "application/problem+json"

_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    422: "Invalid input",
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
            title=title or _TITLES.get(status, "Error"), status=status, detail=detail, field=field
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
    parts = [str(part) for part in location[1:]] or [str(part) for part in location]
    return ".".join(parts)


#: Allowed ranges of the request bodies' fields, by field name, from their models' constraints.
_ALLOWED: dict[str, str] = {}


def register_body_model(model: type[BaseModel]) -> type[BaseModel]:
    """Let validation problems about `model`'s fields state their allowed range (call once per body)."""
    for name, info in model.model_fields.items():
        allowed = _range_text(info.metadata)
        if allowed and info.description:
            allowed = f"{allowed} ({info.description})"
        if allowed:
            _ALLOWED.setdefault(name, allowed)
    return model


def _range_text(metadata: list[Any]) -> str:
    low = high = ""
    for item in metadata:
        if isinstance(item, annotated_types.Gt):
            low = f"({item.gt}"
        elif isinstance(item, annotated_types.Ge):
            low = f"[{item.ge}"
        elif isinstance(item, annotated_types.Lt):
            high = f"{item.lt})"
        elif isinstance(item, annotated_types.Le):
            high = f"{item.le}]"
    if low and high:
        return f"{low}, {high}"
    if low:
        return f"{'>' if low[0] == '(' else '≥'} {low[1:]}"
    if high:
        return f"{'<' if high[-1] == ')' else '≤'} {high[:-1]}"
    return ""


def _validation_detail(error: dict[str, Any]) -> str:
    field = _field_name(tuple(error.get("loc", ())))
    given = error.get("input")
    message = error.get("msg", "invalid")
    shown = "" if isinstance(given, dict) or given is None else f" (got {given!r})"
    allowed = _ALLOWED.get(field.rsplit(".", 1)[-1])
    return f"{field}: {message}{shown}" + (f"; allowed: {allowed}" if allowed else "")


async def _on_validation_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    errors = list(error.errors())
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    detail = "; ".join(_validation_detail(item) for item in errors) or "invalid request"
    problem = Problem(
        title=_TITLES[422], status=422, detail=detail, field=_field_name(tuple(first.get("loc", ())))
    )
    return problem_response(problem, request)


async def _on_input_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, InputError)
    problem = Problem(title=_TITLES[422], status=422, detail=str(error), field=error.field)
    return problem_response(problem, request)


async def _on_api_problem(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, ApiProblem)
    return problem_response(error.problem, request, error.headers)


async def _on_http_exception(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, StarletteHTTPException)
    detail = error.detail if isinstance(error.detail, str) else str(error.detail)
    if error.status_code == 404 and detail == "Not Found":
        detail = f"no such path {request.url.path!r}; the API's paths are listed at /openapi.json"
    problem = Problem(title=_TITLES.get(error.status_code, "Error"), status=error.status_code, detail=detail)
    return problem_response(problem, request, getattr(error, "headers", None))


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
