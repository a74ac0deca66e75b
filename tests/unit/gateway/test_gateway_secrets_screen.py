"""The gateway's copy of the secrets service's prefilters: it vouches for a clean text only
while it holds the set the service last answered with."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

import pytest

from mithril.gateway.secrets_screen import SecretsScreen

FIRST = ({"aws_access_key": "AKIA", "github_token": "gh[pousr]_"}, "f1")
SECOND = ({"aws_access_key": "AKIA", "slack_token": "xox[abp]-"}, "f2")


class Service:
    """Answers GetPrefilters with `published`, counting the calls."""

    def __init__(self) -> None:
        self.published: tuple[Mapping[str, str], str] = FIRST
        self.calls = 0
        self.fail = False

    async def fetch(self) -> tuple[Mapping[str, str], str]:
        self.calls += 1
        if self.fail:
            raise ConnectionError("unavailable")
        return self.published


async def settled(screen: SecretsScreen) -> None:
    for _ in range(100):
        await asyncio.sleep(0)
        if screen._refreshing is None or screen._refreshing.done():
            return
    raise AssertionError("the refresh did not finish")


async def test_it_vouches_only_once_it_holds_the_set() -> None:
    service = Service()
    screen = SecretsScreen(service.fetch)
    assert screen.may_find(b"nothing here")  # no set yet: the call is made
    await settled(screen)
    assert service.calls == 1 and screen.fingerprint == "f1"
    assert not screen.may_find(b"nothing here")
    assert screen.may_find(b"key AKIA0123456789ABCDEF")
    assert screen.may_find(b"token ghp_abc")
    assert not screen.may_find(b"xoxb-123")  # not in the first set
    await screen.close()


async def test_another_fingerprint_retires_the_set_until_it_is_fetched() -> None:
    service = Service()
    screen = SecretsScreen(service.fetch)
    await screen.refresh()
    screen.observe("f1")  # the same set: nothing changes
    assert not screen.may_find(b"xoxb-123") and service.calls == 1

    service.published = SECOND  # a rolling upgrade
    screen.observe("f2")
    assert screen.may_find(b"plain words")  # cannot vouch until it has the new set
    await settled(screen)
    assert service.calls == 2 and screen.fingerprint == "f2"
    assert screen.may_find(b"xoxb-123")
    assert not screen.may_find(b"token ghp_abc")
    await screen.close()


async def test_an_old_set_is_not_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    service = Service()
    screen = SecretsScreen(service.fetch, max_age=30.0)
    await screen.refresh()
    assert not screen.may_find(b"plain words")
    clock = time.monotonic() + 31.0
    monkeypatch.setattr("mithril.gateway.secrets_screen.time.monotonic", lambda: clock)
    assert screen.may_find(b"plain words")
    await settled(screen)
    assert service.calls == 2 and not screen.may_find(b"plain words")
    await screen.close()


async def test_a_service_that_cannot_publish_leaves_every_text_to_the_call() -> None:
    service = Service()
    service.fail = True
    screen = SecretsScreen(service.fetch, retry_after=30.0)
    for _ in range(5):
        assert screen.may_find(b"plain words")
        await settled(screen)
    assert service.calls == 1  # retried after retry_after, not on every text


async def test_a_pattern_re2_cannot_compile_leaves_every_text_to_the_call() -> None:
    async def broken() -> tuple[Mapping[str, str], str]:
        return {"bad": "(unclosed"}, "f9"

    screen = SecretsScreen(broken)
    await screen.refresh()
    assert screen.may_find(b"plain words")
    await screen.close()


def test_without_an_event_loop_it_answers_may_find() -> None:
    screen = SecretsScreen(Service().fetch)
    assert screen.may_find(b"plain words")
