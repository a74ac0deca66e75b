"""The dashboard's Memory tab in a real headless browser (Debian chromium, playwright)
against the real stack: gateway, memory gate (embedded Cognee), reputation, scanner and
secrets, seeded through the REST API.

The test logs in, opens the Memory tab, finds the held claims in the review queue, opens a
decision's provenance (signals, weights, reasons, redacted kinds), approves a claim (it
leaves the queue and recall returns it), reads a source's reputation chart (an inline SVG
path), resets a source, and checks that hostile claim text is shown as text, never run.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.memory_stack import MemoryStack, shared_stack

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]

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
AWS_KEY = "AKIAQ3EGRZLNW7T2X5PB"
HOSTILE = '<img src=x onerror="window.__xss=1">'
HELD = ("review", "quarantine", "reject")


@pytest.fixture(scope="module")
def stack(request: pytest.FixtureRequest) -> MemoryStack:
    return shared_stack(request)


@pytest.fixture(scope="module")
def seeded(stack: MemoryStack) -> Iterator[dict[str, Any]]:
    """Three claims from agents nobody vouches for: plain, with a credential, hostile."""
    tag = uuid.uuid4().hex[:8]
    claims = {
        "plain": (
            f"unknown-agent-{tag}",
            f"The on-call rotation of team {tag} switches to Tuesdays at 09:00 UTC.",
        ),
        "secret": (f"ci-bot-{tag}", f"CI uploads build artifacts with the AWS key {AWS_KEY}."),
        "hostile": (f"hostile-{tag}", f"{HOSTILE} the cache TTL of service {tag} is 5 minutes."),
    }
    decisions: dict[str, dict[str, Any]] = {}
    with httpx.Client(base_url=stack.url, headers=stack.bearer, timeout=120) as client:
        for name, (source, claim) in claims.items():
            response = client.post("/v1/memory/remember", json={"claim": claim, "source": source})
            assert response.status_code == 200, response.text
            decisions[name] = response.json()["decision"]
    assert decisions["plain"]["status"] in HELD, decisions["plain"]
    assert decisions["plain"]["quarantine_id"]
    assert "aws_access_key" in decisions["secret"]["redacted_kinds"]
    yield {"tag": tag, "claims": claims, "decisions": decisions}


def test_memory_tab_in_a_browser(
    stack: MemoryStack, seeded: dict[str, Any], artifacts_dir: Path
) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent (install Debian's chromium package)")
    from playwright.sync_api import expect, sync_playwright

    base = stack.url
    claims, decisions = seeded["claims"], seeded["decisions"]
    plain_source, plain_claim = claims["plain"]
    secret_source, _ = claims["secret"]
    hostile_source, hostile_claim = claims["hostile"]
    held_id = decisions["plain"]["quarantine_id"]
    requested: list[str] = []
    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            page.set_default_timeout(20_000)
            page.on("request", lambda request: requested.append(request.url))
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            page.on(
                "console",
                lambda m: (
                    problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None
                ),
            )
            page.on("dialog", lambda d: (problems.append("dialog opened"), d.dismiss()))

            page.goto(base + "/")
            page.fill("#token", stack.token)
            page.click("button[type=submit]")
            expect(page.locator("#view-events")).to_be_visible()
            expect(page.locator("#view-memory")).to_be_hidden()

            # The Memory tab: the review queue holds the unknown agent's claim.
            page.click("#tab-memory")
            expect(page.locator("#view-memory")).to_be_visible()
            expect(page.locator("#view-events")).to_be_hidden()
            assert "view=memory" in page.url  # kept in the address, survives a reload
            row = page.locator(f'tr.held-row[data-id="{held_id}"]')
            expect(row).to_have_count(1)
            expect(row.locator("td.claim")).to_have_text(plain_claim)
            expect(row.locator("td.source")).to_have_text(plain_source)
            expect(row.locator("td.status")).to_have_text(decisions["plain"]["status"])

            # Hostile claim text is shown as text, never run; the key never reaches the page.
            hostile = page.locator(
                "tr.held-row", has=page.locator(f'td.source:text-is("{hostile_source}")')
            )
            if decisions["hostile"]["status"] in HELD:
                expect(hostile).to_have_count(1)
                expect(hostile.locator("td.claim")).to_contain_text(HOSTILE)
            assert page.evaluate("window.__xss") is None
            assert page.locator("#view-memory img").count() == 0
            secret_row = page.locator(
                "tr.held-row", has=page.locator(f'td.source:text-is("{secret_source}")')
            )
            if decisions["secret"]["status"] in HELD:
                expect(secret_row).to_have_count(1)
                expect(secret_row.locator("td.claim")).to_contain_text("[REDACTED:aws_access_key]")
            assert AWS_KEY not in page.content()

            # A held claim's provenance: signals, weights, trust score, reasons.
            row.locator("td.claim").click()
            provenance = page.locator("#provenance")
            expect(provenance).to_be_visible()
            expect(page.locator("#prov-fields")).to_contain_text(decisions["plain"]["decision_id"])
            expect(page.locator("#prov-claim")).to_have_text(plain_claim)
            signals = page.locator("tr.signal-row")
            expect(signals).to_have_count(5)
            for name in ("reputation", "corroboration", "freshness", "contradiction", "danger"):
                signal = page.locator(f'tr.signal-row[data-signal="{name}"]')
                expected = f"{decisions['plain']['signals'][name]:.3f}"
                expect(signal.locator("td.value")).to_have_text(expected)
                expect(signal.locator("svg.bar")).to_have_count(1)
            weights = decisions["plain"]["weights"]
            if "reputation" in weights:
                expect(
                    page.locator('tr.signal-row[data-signal="reputation"] td.weight')
                ).to_have_text(f"{weights['reputation']:.2f}")
            expect(page.locator("#prov-score")).to_contain_text(
                f"{decisions['plain']['trust_score']:.3f}"
            )
            for reason in decisions["plain"]["reasons"]:
                expect(page.locator("#prov-reasons")).to_contain_text(reason)

            # The credential's provenance names the redacted kind, never the key.
            if decisions["secret"]["status"] in HELD:
                secret_row.locator("td.claim").click()
                expect(page.locator("#prov-redacted")).to_contain_text("aws_access_key")
                expect(page.locator("#prov-claim")).to_contain_text("[REDACTED:aws_access_key]")
                assert AWS_KEY not in page.content()

            # Hostile text in the provenance is text too.
            if decisions["hostile"]["status"] in HELD:
                hostile.locator("td.claim").click()
                expect(page.locator("#prov-claim")).to_have_text(hostile_claim)
                assert page.evaluate("window.__xss") is None

            # Approve needs a reviewer; then the row leaves the queue.
            page.fill("#m-reviewer", "browser-test")
            row.locator("input.note").fill("checked with the team")
            row.locator("button.approve").click()
            # Approving writes to Cognee: seconds, more on a loaded machine.
            expect(page.locator(f'tr.held-row[data-id="{held_id}"]')).to_have_count(
                0, timeout=60_000
            )
            expect(page.locator("#m-error")).to_be_hidden()
            with httpx.Client(base_url=base, headers=stack.bearer, timeout=120) as client:
                held = client.get(f"/v1/memory/quarantine/{held_id}").json()
                assert held["review_verdict"] == "approve" and held["reviewer"] == "browser-test"
                recalled = client.post(
                    "/v1/memory/recall",
                    json={
                        "query": f"When does the on-call rotation of team {seeded['tag']} switch?"
                    },
                ).json()
            assert any(m["text"] == plain_claim for m in recalled["memories"]), recalled

            # The reviewed claim shows up again with include reviewed, with its verdict.
            page.check("#m-reviewed")
            reviewed = page.locator(f'tr.held-row[data-id="{held_id}"]')
            expect(reviewed).to_have_count(1)
            expect(reviewed.locator("td.actions")).to_contain_text("approve")
            page.uncheck("#m-reviewed")
            expect(page.locator(f'tr.held-row[data-id="{held_id}"]')).to_have_count(0)

            # Reputation over time: an inline SVG line per source, larger on click.
            rep_row = page.locator(f'tr.rep-row[data-source="{plain_source}"]')
            expect(rep_row).to_have_count(1)
            path = rep_row.locator("svg.spark path.line")
            expect(path).to_have_count(1)
            assert (path.get_attribute("d") or "").startswith("M")
            rep_row.locator("td.source").click()
            expect(page.locator("#rep-detail")).to_be_visible()
            expect(page.locator("#rep-detail-title")).to_contain_text(plain_source)
            expect(page.locator("#rep-chart-large svg.spark path.line")).to_have_count(1)
            expect(page.locator("#rep-change-rows tr").first).to_be_visible()

            # The audit log: the approval is there, and opens the decision's provenance.
            audit = page.locator(
                "tr.audit-row", has=page.locator(f'td.source:text-is("{plain_source}")')
            )
            expect(audit.first).to_be_visible()
            review_event = page.locator(
                'tr.audit-row[data-event-type="review"]',
                has=page.locator(f'td.source:text-is("{plain_source}")'),
            )
            expect(review_event).to_have_count(1)
            expect(review_event.locator("td.reviewer")).to_have_text("browser-test")
            page.locator("#prov-close").click()
            expect(provenance).to_be_hidden()
            review_event.click()
            expect(provenance).to_be_visible()
            expect(page.locator("#prov-fields")).to_contain_text("browser-test")
            expect(signals).to_have_count(5)
            expect(page.locator("#prov-claim")).to_have_text(plain_claim)

            page.screenshot(path=str(artifacts_dir / "dashboard-memory.png"), full_page=True)

            # Reset takes two clicks (no dialog) and puts the score back to the prior.
            secret_rep = page.locator(f'tr.rep-row[data-source="{secret_source}"]')
            if secret_rep.count():
                reset = secret_rep.locator("button.reset")
                reset.click()
                expect(reset).to_contain_text("confirm")
                reset.click()
                secret_rep = page.locator(f'tr.rep-row[data-source="{secret_source}"]')
                prior = secret_rep.locator("td.prior").inner_text()
                expect(secret_rep.locator("td.score")).to_have_text(prior)

            # A reload keeps the Memory tab.
            page.reload()
            expect(page.locator("#view-memory")).to_be_visible()
            expect(page.locator("tr.rep-row").first).to_be_visible()
            page.click("#tab-events")
            expect(page.locator("#view-events")).to_be_visible()
            assert "view=memory" not in page.url
        finally:
            browser.close()

    assert not problems, problems
    assert requested and all(url.startswith(base + "/") for url in requested), [
        url for url in requested if not url.startswith(base + "/")
    ]  # offline: nothing from a CDN or anywhere else
