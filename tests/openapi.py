"""A check that an HTTP answer is one the app's OpenAPI document describes (status, content type, body)."""

from __future__ import annotations

from typing import Any

import httpx
import schemathesis


def assert_documented(app: Any, route: str, response: httpx.Response, **path_parameters: str) -> None:
    """Fail unless ``response`` to ``GET route`` conforms to ``app.openapi()`` (schemathesis's checks)."""
    schema = schemathesis.openapi.from_dict(app.openapi())
    case = schema[route]["GET"].Case(path_parameters=path_parameters)
    case.validate_response(response)
