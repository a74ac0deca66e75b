"""Page sizes and opaque page tokens for ListReputations and GetHistory (AIP-158).

A token is the URL-safe base64 of `[kind, scope, cursor]`: which listing it continues,
what it lists (the source of a history; "" for the list of sources) and where the last
page ended. A token from another listing, or from another source's history, is refused
rather than silently misread.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from mithril.services.reputation.model import ReputationArgumentError

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500

SOURCES = "sources"
HISTORY = "history"


def page_size(requested: int) -> int:
    """0 means the default; more than the maximum means the maximum; negative is refused."""
    if requested < 0:
        raise ReputationArgumentError("page_size", "must not be negative")
    if requested == 0:
        return DEFAULT_PAGE_SIZE
    return min(requested, MAX_PAGE_SIZE)


def encode(kind: str, scope: str, cursor: str | int) -> str:
    raw = json.dumps([kind, scope, cursor], separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode(token: str, kind: str, scope: str) -> Any:
    """The cursor inside `token`; raises ReputationArgumentError("page_token") if the
    token is malformed or belongs to another listing."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        value = json.loads(raw.decode())
    except (binascii.Error, ValueError):
        raise ReputationArgumentError("page_token", "not a token this service issued") from None
    if not (isinstance(value, list) and len(value) == 3):
        raise ReputationArgumentError("page_token", "not a token this service issued")
    token_kind, token_scope, cursor = value
    if token_kind != kind or token_scope != scope:
        raise ReputationArgumentError(
            "page_token", "belongs to another listing; pass it back with the same request"
        )
    return cursor


def decode_key(token: str, kind: str, scope: str) -> str:
    cursor = decode(token, kind, scope)
    if not isinstance(cursor, str):
        raise ReputationArgumentError("page_token", "not a token this service issued")
    return cursor


def decode_id(token: str, kind: str, scope: str) -> int:
    cursor = decode(token, kind, scope)
    if isinstance(cursor, bool) or not isinstance(cursor, int):
        raise ReputationArgumentError("page_token", "not a token this service issued")
    return cursor
