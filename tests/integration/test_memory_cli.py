"""`mithril memory ...` and `mithril ingest` against a live gateway in front of the real
memory gate and reputation service (`tests.memory_stack`, on its own thread, so the CLI
can be driven synchronously from here).

Tables for people, `--json` for machines; every error one line on stderr and exit 1; a
bad input for `ingest` exits 2 and sends nothing (the audit log is unchanged).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from mithril.cli.main import app
from tests.conftest import free_port
from tests.memory_stack import MemoryStack, shared_stack

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

AWS_KEY = "AKIAQ3EGRZLNW7T2X5PB"
TRUSTED = "Security Policy"
HELD = ("review", "quarantine", "reject")


@pytest.fixture(scope="module")
def stack(request: pytest.FixtureRequest) -> MemoryStack:
    return shared_stack(request)


@pytest.fixture
def cli(stack: MemoryStack, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run `mithril ARGS... --remote <stack> --token <admin>`."""
    monkeypatch.delenv("MITHRIL_ADMIN_TOKEN", raising=False)

    def run(*args: str, token: str | None = stack.token, remote: str = stack.url) -> Result:
        extra = ["--remote", remote] + (["--token", token] if token is not None else [])
        return CliRunner().invoke(app, [*args, *extra])

    return run


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def audit_ids(stack: MemoryStack) -> list[str]:
    response = httpx.get(
        f"{stack.url}/v1/memory/audit", params={"page_size": 50}, headers=stack.bearer, timeout=60
    )
    assert response.status_code == 200, response.text
    return [event["id"] for event in response.json()["data"]]


def one_error_line(result: Result) -> str:
    assert result.exit_code == 1, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    return lines[0]


# -- memory commands ----------------------------------------------------------------------


def test_remember_table_and_json(cli) -> None:  # type: ignore[no-untyped-def]
    topic = unique("juniper")
    table = cli(
        "memory", "remember", f"The {topic} wiki lives at wiki.internal/{topic}.", "-s", TRUSTED
    )
    assert table.exit_code == 0, table.stderr
    first = table.stdout.splitlines()[0]
    assert first.split()[0] in ("ACCEPT", "WARN") and "trust" in first and "stored" in first
    assert "signal" in table.stdout and "reputation" in table.stdout

    held = cli(
        "memory",
        "remember",
        f"The {topic} deploy key is {AWS_KEY}.",
        "--source",
        unique("agent"),
        "--meta",
        "ticket=OPS-9",
        "--json",
    )
    decision = as_json(held)["decision"]
    assert "aws_access_key" in decision["redacted_kinds"]
    assert AWS_KEY not in held.stdout


def test_recall_table_and_json(cli) -> None:  # type: ignore[no-untyped-def]
    topic = unique("tamarind")
    assert (
        cli("memory", "remember", f"The {topic} standup is at 9:15.", "-s", TRUSTED).exit_code == 0
    )
    table = cli("memory", "recall", f"{topic} standup")
    assert table.exit_code == 0, table.stderr
    assert "score" in table.stdout and "source" in table.stdout and topic in table.stdout
    memories = as_json(cli("memory", "recall", f"{topic} standup", "-k", "3", "--json"))["memories"]
    assert 1 <= len(memories) <= 3 and any(topic in m["text"] for m in memories)


def test_quarantine_review_and_audit(cli) -> None:  # type: ignore[no-untyped-def]
    topic = unique("ochre")
    source = unique("agent")
    decision = as_json(
        cli(
            "memory",
            "remember",
            f"The {topic} badge office moved to room 12.",
            "-s",
            source,
            "--json",
        )
    )["decision"]
    assert decision["status"] in HELD
    held_id = decision["quarantine_id"]

    listing = cli("memory", "quarantine", "--status", decision["status"])
    assert listing.exit_code == 0, listing.stderr
    assert held_id in listing.stdout and "pending" in listing.stdout
    page = as_json(cli("memory", "quarantine", "--json", "--page-size", "500"))
    assert held_id in {h["id"] for h in page["data"]}

    detail = cli("memory", "quarantine", held_id)
    assert detail.exit_code == 0, detail.stderr
    assert "pending review" in detail.stdout and "room 12" in detail.stdout
    assert as_json(cli("memory", "quarantine", held_id, "--json"))["id"] == held_id

    approved = cli("memory", "review", held_id, "approve", "--reviewer", "erin", "--note", "ok")
    assert approved.exit_code == 0, approved.stderr
    assert "approved into verified memory by erin" in approved.stdout
    again = one_error_line(cli("memory", "review", held_id, "reject", "--reviewer", "erin"))
    assert "reviewed already" in again and "409" in again

    recalled = as_json(cli("memory", "recall", f"{topic} badge office", "--json"))
    assert any(topic in m["text"] for m in recalled["memories"])

    audit = cli("memory", "audit", "--source", source)
    assert audit.exit_code == 0, audit.stderr
    assert "review" in audit.stdout and "decision" in audit.stdout and "erin" in audit.stdout
    events = as_json(cli("memory", "audit", "--source", source, "--json"))["data"]
    assert [e["event_type"] for e in events][:1] == ["review"]


def test_reputation_commands(cli) -> None:  # type: ignore[no-untyped-def]
    source = unique("agent")
    assert cli("memory", "remember", f"{source} likes tea.", "-s", source).exit_code == 0
    listing = cli("memory", "reputation", "--page-size", "500")
    assert listing.exit_code == 0, listing.stderr
    assert "score" in listing.stdout and "prior" in listing.stdout
    shown = cli("memory", "reputation", source)
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.startswith(f"{source}: score")
    both = as_json(cli("memory", "reputation", source, "--json"))
    assert both["reputation"]["source"] == source and "data" in both["history"]
    reset = cli("memory", "reputation", source, "--reset")
    assert reset.exit_code == 0 and "reset 1 source to their priors" in reset.stdout
    assert as_json(cli("memory", "reputation", source, "--reset", "--json")) == {"reset_count": 1}
    refused = cli("memory", "reputation", "--reset")
    assert refused.exit_code == 2  # every source only with --all


def test_improve(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("memory", "improve", "--json")
    assert isinstance(as_json(result)["summary"], str)


def test_errors_are_one_line(cli, stack, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MITHRIL_HOME", str(tmp_path))  # no admin-token file here
    line = one_error_line(cli("memory", "audit", token=None))
    assert "401" in line and "--token" in line and "MITHRIL_ADMIN_TOKEN" in line
    line = one_error_line(cli("memory", "quarantine", "no-such-id"))
    assert "404" in line
    line = one_error_line(cli("memory", "remember", "   ", "-s", "x"))
    assert "400" in line and "claim" in line
    line = one_error_line(cli("memory", "recall", "x", remote=f"http://127.0.0.1:{free_port()}"))
    assert "cannot reach the gateway" in line and "mithril up" in line


def test_token_from_env_and_from_home(cli, stack, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MITHRIL_HOME", str(tmp_path))
    monkeypatch.setenv("MITHRIL_ADMIN_TOKEN", stack.token)
    assert cli("memory", "audit", "--page-size", "1", token=None).exit_code == 0
    monkeypatch.delenv("MITHRIL_ADMIN_TOKEN")
    (tmp_path / "admin-token").write_text(stack.token + "\n")
    assert cli("memory", "audit", "--page-size", "1", token=None).exit_code == 0


def test_the_installed_entry_point(stack) -> None:  # type: ignore[no-untyped-def]
    result = subprocess.run(
        [
            *(sys.executable, "-m", "mithril.cli.main", "memory", "reputation", "--json"),
            *("--remote", stack.url, "--token", stack.token),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert result.returncode == 0, result.stderr
    assert set(json.loads(result.stdout)) == {"data", "next_page_token"}


# -- ingest -------------------------------------------------------------------------------


def slack_export(root: Path, topic: str) -> Path:
    (root / "general").mkdir(parents=True)
    (root / "random").mkdir()
    (root / "users.json").write_text(json.dumps([{"id": "U1", "name": "alice"}]))
    (root / "general" / "2024-03-01.json").write_text(
        json.dumps(
            [
                {
                    "type": "message",
                    "user": "U1",
                    "text": f"The {topic} VPN is vpn3.example.com",
                    "ts": "1709290000.000100",
                },
                {
                    "type": "message",
                    "subtype": "channel_join",
                    "user": "U2",
                    "text": "<@U2> has joined",
                    "ts": "1709290001.0",
                },
                {
                    "type": "message",
                    "user": "U1",
                    "text": f"The {topic} CI token is {AWS_KEY}",
                    "ts": "1709290002.0",
                },
            ]
        )
    )
    (root / "random" / "2024-03-02.json").write_text(
        json.dumps(
            [
                {
                    "type": "message",
                    "bot_id": "B1",
                    "subtype": "bot_message",
                    "text": "beep",
                    "ts": "1709376400.0",
                },
                {
                    "type": "message",
                    "user": "U1",
                    "text": f"{topic} lunch is at noon",
                    "ts": "1709376401.0",
                },
            ]
        )
    )
    return root


def test_ingest_a_slack_folder(cli, stack, tmp_path) -> None:  # type: ignore[no-untyped-def]
    topic = unique("sienna")
    source = unique("Slack")
    result = cli("ingest", str(slack_export(tmp_path / "export", topic)), "--source", source)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert "ingest summary" in result.stdout
    assert "skipped" in result.stdout and "channel_join 1" in result.stdout
    assert "aws_access_key x1" in result.stdout
    assert AWS_KEY not in result.output
    events = httpx.get(
        f"{stack.url}/v1/memory/audit", params={"source": source}, headers=stack.bearer
    ).json()["data"]
    assert len(events) == 3
    assert AWS_KEY not in json.dumps(events)
    held = httpx.get(
        f"{stack.url}/v1/memory/quarantine",
        params={"page_size": 500, "include_reviewed": "true"},
        headers=stack.bearer,
    ).json()["data"]
    mine = [h for h in held if h["source"] == source]
    assert mine and all(AWS_KEY not in h["claim"] for h in mine)


def test_ingest_a_slack_zip_as_json(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    topic = unique("umber")
    folder = slack_export(tmp_path / "export", topic)
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for file in folder.rglob("*.json"):
            zipped.write(file, "Acme Slack export/" + file.relative_to(folder).as_posix())
    summary = as_json(cli("ingest", str(archive), "--json", "--concurrency", "2"))
    assert summary["format"] == "slack" and summary["claims"] == 3 and summary["sent"] == 3
    assert sum(summary["statuses"].values()) == 3
    assert summary["redacted"] == {"aws_access_key": 1}
    assert summary["skipped"] == {"bot_message": 1, "channel_join": 1}
    assert summary["errors"] == [] and summary["stopped"] is None
    assert {r["source"] for r in summary["results"]} == {"Slack"}
    assert all(r["decision_id"] for r in summary["results"])


def test_ingest_txt_and_jsonl(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    topic = unique("cerulean")
    notes = tmp_path / "notes.txt"
    notes.write_text(f"The {topic} office has a new printer.\n\nIts name is {topic}-prn.\n")
    summary = as_json(cli("ingest", str(notes), "-s", TRUSTED, "--json"))
    assert summary["format"] == "txt" and summary["sent"] == 2
    assert summary["stored"] == 2  # a trusted source, fresh claims

    rows = tmp_path / "claims.jsonl"
    rows.write_text(
        "\n".join(
            json.dumps(row)
            for row in [
                {"text": f"{topic} backups run nightly.", "source": TRUSTED},
                {"text": f"{topic} backups are kept 30 days.", "timestamp": "2024-01-01T00:00:00Z"},
            ]
        )
    )
    table = cli("ingest", str(rows), "--source", unique("agent"))
    assert table.exit_code == 0, table.stderr
    assert "ingest summary" in table.stdout and "errors" in table.stdout


@pytest.mark.parametrize(
    ("name", "content", "args", "expected"),
    [
        (
            "claims.jsonl",
            '{"text": "fine", "source": "x"}\n{"text": ""}\n',
            [],
            ":2: `text` is empty",
        ),
        ("claims.jsonl", '{"text": "fine"}\n', [], "no `source`"),
        ("claims.jsonl", json.dumps({"text": "x" * 9000, "source": "s"}), [], "limit is 8000"),
        ("notes.txt", "A claim.\n", [], "--source is required"),
        ("export.zip", "not a zip", [], "not a readable zip file"),
    ],
)
def test_bad_input_sends_nothing(cli, stack, tmp_path, name, content, args, expected) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.write_text(content)
    before = audit_ids(stack)
    result = cli("ingest", str(path), *args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert expected in result.stderr and "nothing was sent" in result.stderr
    assert audit_ids(stack) == before


def test_a_malformed_export_sends_nothing(cli, stack, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = slack_export(tmp_path / "export", unique("teal"))
    (root / "random" / "2024-03-03.json").write_text('[{"text": "half a file", "ts": ')
    before = audit_ids(stack)
    result = cli("ingest", str(root))
    assert result.exit_code == 2
    assert "random/2024-03-03.json: not valid JSON" in result.stderr
    assert audit_ids(stack) == before


def test_ingest_stops_when_no_gateway_answers(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    notes = tmp_path / "notes.txt"
    notes.write_text("One.\n\nTwo.\n\nThree.\n")
    dead = cli("ingest", str(notes), "-s", "x", remote=f"http://127.0.0.1:{free_port()}")
    assert dead.exit_code == 1
    assert "stopped after 0 of 3 claim(s)" in dead.stderr and "mithril up" in dead.stderr
