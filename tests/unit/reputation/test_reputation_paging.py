"""Page sizes are bounded; page tokens are opaque and refused when foreign or tampered."""

from __future__ import annotations

import base64

import pytest

from mithril.services.reputation import paging
from mithril.services.reputation.model import ReputationArgumentError


@pytest.mark.parametrize(
    ("requested", "used"),
    [(0, 50), (1, 1), (50, 50), (500, 500), (501, 500), (2**31 - 1, 500)],
)
def test_page_size(requested: int, used: int) -> None:
    assert paging.page_size(requested) == used


def test_negative_page_size_is_refused() -> None:
    with pytest.raises(ReputationArgumentError) as error:
        paging.page_size(-1)
    assert error.value.field == "page_size"


def test_tokens_round_trip() -> None:
    token = paging.encode(paging.SOURCES, "", "slack")
    assert paging.decode_key(token, paging.SOURCES, "") == "slack"
    token = paging.encode(paging.HISTORY, "slack", 1234)
    assert paging.decode_id(token, paging.HISTORY, "slack") == 1234
    assert "slack" not in token  # opaque, if not secret


@pytest.mark.parametrize(
    "token",
    [
        "not a token",
        "!!!!",
        base64.urlsafe_b64encode(b"{}").decode(),
        base64.urlsafe_b64encode(b'["history","slack"]').decode(),
        base64.urlsafe_b64encode(b"\xff\xfe").decode(),
        paging.encode(paging.HISTORY, "slack", "12"),  # a cursor of the wrong type
        paging.encode(paging.HISTORY, "slack", True),
    ],
)
def test_malformed_tokens_are_refused(token: str) -> None:
    with pytest.raises(ReputationArgumentError) as error:
        paging.decode_id(token, paging.HISTORY, "slack")
    assert error.value.field == "page_token"


def test_a_token_only_continues_its_own_listing() -> None:
    other_source = paging.encode(paging.HISTORY, "pastebin", 10)
    with pytest.raises(ReputationArgumentError, match="another listing"):
        paging.decode_id(other_source, paging.HISTORY, "slack")
    sources_token = paging.encode(paging.SOURCES, "", "slack")
    with pytest.raises(ReputationArgumentError, match="another listing"):
        paging.decode_id(sources_token, paging.HISTORY, "slack")
