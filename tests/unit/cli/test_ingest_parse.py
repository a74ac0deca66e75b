"""`mithril ingest` input parsing: Slack exports (folder and zip), .txt, .jsonl, bad input."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mithril.cli.ingest import (
    MAX_CLAIM_CHARS,
    InputError,
    parse_input,
    parse_time,
    slack_text,
)
from mithril.cli.main import app

USERS = [
    {"id": "U1", "name": "alice", "profile": {"display_name": "Alice"}},
    {"id": "U2", "name": "bob", "real_name": "Bob B"},
]
GENERAL_DAY = [
    {
        "type": "message",
        "user": "U1",
        "text": "The VPN moved to vpn2.example.com",
        "ts": "1700000000.000100",
    },
    {
        "type": "message",
        "subtype": "channel_join",
        "user": "U2",
        "text": "<@U2> has joined",
        "ts": "1700000001.000200",
    },
    {
        "type": "message",
        "subtype": "bot_message",
        "bot_id": "B1",
        "text": "deploy ok",
        "ts": "1700000002.0",
    },
    {"type": "message", "user": "U2", "bot_id": "B9", "text": "I am a bot", "ts": "1700000002.5"},
    {"type": "message", "user": "U2", "text": "", "ts": "1700000003.0"},
    {
        "type": "message",
        "user": "U2",
        "text": "Ask <@U1> about <#C1|ops> &amp; see <https://wiki.example.com/vpn|the wiki>",
        "ts": "1700000004.0",
    },
]
OPS_DAY = [
    {
        "type": "message",
        "subtype": "thread_broadcast",
        "user": "U1",
        "text": "Deploys freeze on Fridays",
        "ts": "1700086400.0",
    },
]


def write_export(root: Path, days: dict[str, list[Any]] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "users.json").write_text(json.dumps(USERS))
    (root / "channels.json").write_text(json.dumps([{"id": "C1", "name": "general"}]))
    days = days or {"general/2023-11-14.json": GENERAL_DAY, "ops/2023-11-15.json": OPS_DAY}
    for name, messages in days.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(messages if isinstance(messages, str) else json.dumps(messages))
    return root


def zip_folder(folder: Path, archive: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(archive, "w") as zipped:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                zipped.write(file, prefix + file.relative_to(folder).as_posix())
    return archive


def problems_of(path: Path, **kwargs: Any) -> list[str]:
    with pytest.raises(InputError) as caught:
        parse_input(path, **kwargs)
    return caught.value.problems


# -- Slack --------------------------------------------------------------------------------


def test_slack_folder_keeps_what_people_wrote(tmp_path: Path) -> None:
    parsed = parse_input(write_export(tmp_path / "export"))
    assert parsed.format == "slack"
    texts = [c.text for c in parsed.claims]
    assert texts == [
        "The VPN moved to vpn2.example.com",
        "Ask @Alice about #ops & see the wiki (https://wiki.example.com/vpn)",
        "Deploys freeze on Fridays",
    ]
    first = parsed.claims[0]
    assert first.source == "Slack"
    assert first.metadata == {
        "channel": "general",
        "user": "U1",
        "ts": "1700000000.000100",
        "user_name": "Alice",
    }
    assert first.observed_at == datetime.fromtimestamp(1700000000.0001, UTC)
    assert "general/2023-11-14.json message 1" in first.where
    assert parsed.claims[2].metadata["channel"] == "ops"
    assert parsed.skipped == {"channel_join": 1, "bot_message": 1, "bot": 1, "empty": 1}


@pytest.mark.parametrize("prefix", ["", "My Workspace Slack export/"])
def test_slack_zip_matches_the_folder(tmp_path: Path, prefix: str) -> None:
    folder = write_export(tmp_path / "export")
    archive = zip_folder(folder, tmp_path / "export.zip", prefix)
    from_zip = parse_input(archive)
    from_folder = parse_input(folder)
    assert [(c.text, c.metadata) for c in from_zip.claims] == [
        (c.text, c.metadata) for c in from_folder.claims
    ]
    assert f"{archive}:{prefix}general/2023-11-14.json message 1" == from_zip.claims[0].where


def test_slack_source_override(tmp_path: Path) -> None:
    parsed = parse_input(write_export(tmp_path / "export"), source="Slack #eng")
    assert {c.source for c in parsed.claims} == {"Slack #eng"}


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        ("[{not json", "general/2023-11-14.json: not valid JSON"),
        ('{"messages": []}', "general/2023-11-14.json: expected a list of messages"),
        ('["hello"]', "general/2023-11-14.json message 1: expected a message object"),
        ('[{"text": "hi", "user": "U1"}]', "message 1: `ts` is missing"),
        ('[{"text": "hi", "user": "U1", "ts": "yesterday"}]', "message 1: `ts` is missing"),
        ('[{"text": 42, "user": "U1", "ts": "1.0"}]', "message 1: `text` is not a string"),
        (
            json.dumps([{"text": "x" * (MAX_CLAIM_CHARS + 1), "user": "U1", "ts": "1.0"}]),
            f"the claim has {MAX_CLAIM_CHARS + 1} characters",
        ),
    ],
)
def test_malformed_slack_day_names_file_and_message(
    tmp_path: Path, day: str, expected: str
) -> None:
    root = write_export(tmp_path / "export", {"general/2023-11-14.json": day})
    (problem,) = problems_of(root)
    assert expected in problem
    assert str(root) in problem


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    root = write_export(
        tmp_path / "export",
        {
            "general/2023-11-14.json": '[{"text": "fine", "user": "U1", "ts": "1.0"}, 7]',
            "ops/2023-11-15.json": "nope",
        },
    )
    problems = problems_of(root)
    assert len(problems) == 2
    assert any("message 2" in p for p in problems) and any(
        "ops/2023-11-15.json" in p for p in problems
    )


def test_not_a_slack_export(tmp_path: Path) -> None:
    folder = tmp_path / "random"
    folder.mkdir()
    (folder / "notes.json").write_text("[]")
    (problem,) = problems_of(folder)
    assert "no channel messages found" in problem
    bad_zip = tmp_path / "broken.zip"
    bad_zip.write_bytes(b"PK\x03\x04 not really a zip")
    (problem,) = problems_of(bad_zip)
    assert "not a readable zip file" in problem


def test_export_of_only_joins_has_nothing_to_ingest(tmp_path: Path) -> None:
    root = write_export(tmp_path / "export", {"general/2023-11-14.json": GENERAL_DAY[1:3]})
    (problem,) = problems_of(root)
    assert "no messages to ingest" in problem


def test_slack_text_markup() -> None:
    users = {"U1": "alice"}
    assert slack_text("<@U1> <@U9|bob> <!here> <mailto:a@b.c|a@b.c>", users) == (
        "@alice @bob @here a@b.c (a@b.c)"
    )
    assert slack_text("1 &lt; 2 &amp;&amp; <https://x.y>", users) == "1 < 2 && https://x.y"


# -- .txt ---------------------------------------------------------------------------------


def test_txt_one_claim_per_paragraph(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("\ufeffFirst claim,\nstill the first.\n\n   \nSecond claim.\n\n\nThird.\n")
    parsed = parse_input(path, source="Wiki")
    assert [c.text for c in parsed.claims] == [
        "First claim,\nstill the first.",
        "Second claim.",
        "Third.",
    ]
    assert [c.where for c in parsed.claims] == [f"{path}:1", f"{path}:5", f"{path}:8"]
    assert {c.source for c in parsed.claims} == {"Wiki"}


def test_txt_needs_a_source_and_content(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("A claim.\n")
    (problem,) = problems_of(path)
    assert "--source is required" in problem
    empty = tmp_path / "empty.txt"
    empty.write_text("\n \n")
    (problem,) = problems_of(empty, source="Wiki")
    assert "no claims" in problem
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"ok\n\n\xff\xfe")
    (problem,) = problems_of(binary, source="Wiki")
    assert "not UTF-8" in problem


def test_txt_oversized_paragraph_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("short\n\n" + "y" * (MAX_CLAIM_CHARS + 5) + "\n")
    (problem,) = problems_of(path, source="Wiki")
    assert problem.startswith(f"{path}:3:") and "limit is 8000" in problem


# -- .jsonl -------------------------------------------------------------------------------


def test_jsonl_rows(tmp_path: Path) -> None:
    path = tmp_path / "claims.jsonl"
    rows = [
        {"text": "The office opens at 9.", "source": "HR bot", "timestamp": "2025-01-31T12:00:00Z"},
        {"text": "Lunch is at noon.", "timestamp": 1738324800},
        {"text": "Deploys need two approvals.", "timestamp": 1738324800000, "metadata": {"k": "v"}},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    parsed = parse_input(path, source="Handbook")
    assert [c.source for c in parsed.claims] == ["HR bot", "Handbook", "Handbook"]
    assert parsed.claims[0].observed_at == datetime(2025, 1, 31, 12, tzinfo=UTC)
    assert parsed.claims[1].observed_at == datetime.fromtimestamp(1738324800, UTC)
    assert parsed.claims[2].observed_at == parsed.claims[1].observed_at
    assert parsed.claims[2].metadata == {"k": "v"}
    assert parsed.claims[1].where == f"{path}:2"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{broken", "not valid JSON"),
        ('["a list"]', "expected a JSON object"),
        ('{"source": "x"}', "`text` is missing"),
        ('{"text": 5, "source": "x"}', "`text` is missing or not a string"),
        ('{"text": "   ", "source": "x"}', "`text` is empty"),
        ('{"text": "a claim"}', "no `source`"),
        ('{"text": "a claim", "source": ""}', "`source` must be a non-empty string"),
        ('{"text": "a claim", "source": 3}', "`source` must be a non-empty string"),
        ('{"text": "a", "source": "x", "timestamp": "last week"}', "`timestamp`"),
        ('{"text": "a", "source": "x", "timestamp": true}', "`timestamp`"),
        ('{"text": "a", "source": "x", "metadata": {"n": 1}}', "`metadata` must be"),
        (json.dumps({"text": "z" * 8001, "source": "x"}), "limit is 8000"),
    ],
)
def test_jsonl_bad_rows_name_their_line(tmp_path: Path, line: str, expected: str) -> None:
    path = tmp_path / "claims.jsonl"
    path.write_text(json.dumps({"text": "fine", "source": "x"}) + "\n" + line + "\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:2:"), problem
    assert expected in problem


def test_unknown_format_and_missing_path(tmp_path: Path) -> None:
    path = tmp_path / "claims.csv"
    path.write_text("a,b\n")
    (problem,) = problems_of(path)
    assert "cannot tell the format" in problem
    (problem,) = problems_of(tmp_path / "nope.jsonl")
    assert "no such file" in problem


def test_format_override(tmp_path: Path) -> None:
    path = tmp_path / "claims.log"
    path.write_text(json.dumps({"text": "fine", "source": "x"}) + "\n")
    assert len(parse_input(path, format="jsonl").claims) == 1


def test_parse_time() -> None:
    assert parse_time("2025-01-31T12:00:00+01:00") == datetime(2025, 1, 31, 11, tzinfo=UTC)
    assert parse_time("2025-01-31T12:00:00") == datetime(2025, 1, 31, 12, tzinfo=UTC)
    assert parse_time("1700000000") == datetime.fromtimestamp(1700000000, UTC)
    with pytest.raises(ValueError):
        parse_time([])


# -- the command, before anything is sent ---------------------------------------------------


def test_bad_input_exits_2_and_names_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "claims.jsonl"
    path.write_text('{"text": "ok", "source": "x"}\n{oops\n')
    # A gateway that does not exist: a bad input must fail before any connection.
    result = CliRunner().invoke(
        app, ["ingest", str(path), "--remote", "http://127.0.0.1:9", "--token", "t"]
    )
    assert result.exit_code == 2
    assert f"{path}:2: not valid JSON" in result.stderr
    assert "nothing was sent" in result.stderr


def test_dry_run_counts_without_sending(tmp_path: Path) -> None:
    root = write_export(tmp_path / "export")
    result = CliRunner().invoke(
        app, ["ingest", str(root), "--dry-run", "--json", "--remote", "http://127.0.0.1:9"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["claims"] == 3 and payload["sources"] == {"Slack": 3}
    assert payload["skipped"]["channel_join"] == 1


def test_unreachable_gateway_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("One claim.\n")
    result = CliRunner().invoke(
        app,
        ["ingest", str(path), "-s", "Wiki", "--remote", "http://127.0.0.1:9", "--token", "t"],
    )
    assert result.exit_code == 1
    assert "cannot reach the gateway" in result.stderr and "mithril up" in result.stderr
    assert "Traceback" not in result.output
