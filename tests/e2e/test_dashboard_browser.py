"""The dashboard in a real headless browser (Debian chromium driven by playwright).

A real uvicorn on an ephemeral port serves the admin router over a SQLite store filled with
a few events; the test logs in through the form, reads the totals and rows, filters, opens
an event's findings, and saves a screenshot in tests/artifacts/.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI

from mithril.gateway.errors import install_error_handlers
from mithril.gateway.events import EventLog, EventStore
from mithril.gateway.routes import admin
from tests.conftest import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOKEN = "browser-test-admin-token"
HOSTILE = '<img src=x onerror="window.__xss=1">'


class _Server(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # the test's thread owns no signals
        pass


@pytest.fixture
def dashboard(tmp_path: Path, make_event) -> Iterator[dict[str, Any]]:  # type: ignore[no-untyped-def]
    store = EventStore(f"sqlite:///{tmp_path / 'events.db'}")
    events = [
        make_event(seconds_ago=50, severity="high", tenant="acme", route="/v1/chat/completions"),
        make_event(seconds_ago=40, severity=None, action="allow", tenant="acme"),
        make_event(
            seconds_ago=30,
            severity="critical",
            action="redact",
            tenant="globex",
            detectors=("secrets",),
            rule_ids=("secrets.aws_access_key",),
            excerpt="my key is AKIAQ3EGRZLNW7T2X5PB",
            direction="output",
        ),
        make_event(seconds_ago=20, severity="low", action="allow", tenant="initech"),
        make_event(seconds_ago=10, severity="critical", tenant=HOSTILE, excerpt=HOSTILE),
    ]
    store.write_batch(events)
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(admin.router)
    app.state.event_store = store
    app.state.event_log = EventLog(store)
    app.state.admin_token = TOKEN
    port = free_port()
    server = _Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        assert thread.is_alive(), "uvicorn stopped during startup"
        time.sleep(0.02)
    yield {"url": f"http://127.0.0.1:{port}", "events": events}
    server.should_exit = True
    thread.join(10)
    store.close()


def test_dashboard_in_a_browser(dashboard: dict[str, Any], artifacts_dir: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent (install Debian's chromium package)")
    from playwright.sync_api import expect, sync_playwright

    base, events = dashboard["url"], dashboard["events"]
    requested: list[str] = []
    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(15_000)
            page.on("request", lambda request: requested.append(request.url))
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            page.on(
                "console",
                lambda m: (
                    problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None
                ),
            )
            page.on("dialog", lambda d: (problems.append("dialog opened"), d.dismiss()))

            # Not logged in: the login form, no data.
            page.goto(base + "/")
            expect(page.locator("#login-form")).to_be_visible()
            page.fill("#token", "wrong-token")
            page.click("button[type=submit]")
            expect(page.locator(".notice")).to_contain_text("not the admin token")
            assert problems == [  # chromium logs the 401 of the refused login, nothing else
                "console error: Failed to load resource: the server responded with a status"
                " of 401 (Unauthorized)"
            ]
            problems.clear()
            page.fill("#token", TOKEN)
            page.click("button[type=submit]")

            # The dashboard: totals and every recent event.
            rows = page.locator("tr.event-row")
            expect(rows).to_have_count(len(events))
            expect(page.locator("#t-total")).to_have_text("5")
            expect(page.locator("#t-block")).to_have_text("2")
            expect(page.locator("#t-redact")).to_have_text("1")
            expect(page.locator("#t-allow")).to_have_text("2")
            expect(page.locator("#t-health")).to_contain_text("dropped 0")
            expect(page.locator("#status")).to_contain_text("updated")

            # Hostile data is shown as text, never run.
            hostile = page.locator("tr.event-row").first
            expect(hostile.locator("td.tenant")).to_have_text(HOSTILE)
            assert page.evaluate("window.__xss") is None
            # The store redacted the key before it was stored.
            expect(page.locator("tbody#event-rows")).to_contain_text("[REDACTED:aws_access_key]")
            assert "AKIAQ3EGRZLNW7T2X5PB" not in page.content()

            # A filter changes what is shown.
            page.select_option("#f-action", "block")
            expect(rows).to_have_count(2)
            for action in rows.evaluate_all("rows => rows.map(r => r.dataset.action)"):
                assert action == "block"
            assert "action=block" in page.url  # kept in the address, survives a reload
            page.select_option("#f-action", "")
            page.fill("#f-tenant", "globex")
            page.press("#f-tenant", "Enter")
            expect(rows).to_have_count(1)
            expect(rows.first).to_have_attribute("data-action", "redact")

            # Clicking a row shows its findings.
            rows.first.click()
            detail = page.locator("#detail")
            expect(detail).to_be_visible()
            expect(page.locator("tr.finding-row")).to_have_count(1)
            expect(page.locator("#finding-rows")).to_contain_text("secrets.aws_access_key")
            expect(page.locator("#detail-fields")).to_contain_text(events[2].decision_id)
            expect(page.locator("#detail-excerpt")).to_have_text(
                "my key is [REDACTED:aws_access_key]"
            )

            page.select_option("#f-action", "")
            page.fill("#f-tenant", "")
            page.press("#f-tenant", "Enter")
            expect(rows).to_have_count(len(events))
            page.screenshot(path=str(artifacts_dir / "dashboard.png"), full_page=True)

            # Signing out returns to the login form.
            page.click("text=Sign out")
            expect(page.locator("#login-form")).to_be_visible()
        finally:
            browser.close()

    assert not problems, problems
    assert requested and all(url.startswith(base + "/") for url in requested), [
        url for url in requested if not url.startswith(base + "/")
    ]  # offline: nothing from a CDN or anywhere else
