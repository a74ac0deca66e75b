"""JSON responses serialised with orjson (fast, and strict about what it accepts)."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response


def json_response(payload: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(payload), status_code=status, media_type="application/json")
