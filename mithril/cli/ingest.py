"""`mithril ingest`: send a Slack export, a text file or JSON lines through the memory gate.

Inputs (the format is told by the path; `--format` overrides):

- a Slack export, as the `.zip` Slack gives you or its unpacked folder: one folder per
  channel of `YYYY-MM-DD.json` files, each a list of messages (`text`, `user`, `ts`,
  optional `subtype`). Joins, leaves, topic changes and other housekeeping subtypes, bot
  messages and empty messages are skipped. Each message is a claim from source "Slack"
  (`--source` overrides) with metadata `channel`, `user` (plus `user_name` when the
  export's users.json knows it) and `ts`, observed at `ts`. Mentions, channel links and
  URLs are turned into plain text.
- `.txt`: one claim per paragraph (paragraphs are separated by blank lines); `--source` is
  required.
- `.jsonl`: one object per line with `text`, `source` (or `--source` as the default),
  optional `timestamp` (RFC 3339, or Unix seconds; values above 1e11 are milliseconds) and
  optional `metadata` (an object of strings).

The whole input is parsed and checked before anything is sent: a malformed export, a line
that is not JSON, an empty or oversized claim (over 8000 characters) or a claim without a
source is reported with its file and line (or message), and nothing is sent (exit 2).
Claims then go to the gateway one by one, a few at a time (`--concurrency`), with a
progress bar, and a summary table follows. A gateway that cannot take any claim (down,
wrong token, memory gate down) stops the run at once; claims it refuses one by one are
counted as errors. Exit status: 0, 1 when anything failed to send, 2 for bad input.
"""

from __future__ import annotations

import re
import sys
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

import orjson
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from mithril.cli.memory import RemoteOption, TokenOption, console, explain
from mithril.cli.memory_client import (
    DEFAULT_REMOTE,
    MemoryApiError,
    MemoryClient,
    resolve_token,
)

Format = Literal["slack", "txt", "jsonl"]
FORMATS: tuple[Format, ...] = ("slack", "txt", "jsonl")

MAX_CLAIM_CHARS = 8_000
"""The memory gate's default limit; longer claims are reported before anything is sent."""
MAX_SOURCE_CHARS = 200
MAX_METADATA = 32
MAX_FILE_BYTES = 256 * 1024 * 1024
"""Largest single file (or zip member) read: a guard against zip bombs."""
MAX_PROBLEMS_SHOWN = 20
SLACK_SOURCE = "Slack"
KEEP_SUBTYPES = frozenset({"thread_broadcast", "file_share", "me_message"})
"""Slack subtypes that carry what a person wrote; every other subtype is housekeeping."""
FATAL_STATUSES = frozenset({0, 401, 403, 404, 405, 502, 503})
"""Answers that mean no claim can go through (the rest are about one claim)."""

_DAY_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}\.json$")
_SLACK_MARKUP = re.compile(r"<([^<>\n]{1,2000})>")
_SLACK_TS = re.compile(r"^\d{1,12}(\.\d{1,9})?$")

out = console()
err = console(stderr=True)


@dataclass(frozen=True, slots=True)
class Claim:
    text: str
    source: str
    where: str
    """Where it came from, for messages: `file:line` or `export:channel/day.json message N`."""
    metadata: dict[str, str] = field(default_factory=dict)
    observed_at: datetime | None = None


@dataclass
class Parsed:
    format: Format
    claims: list[Claim] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    """Messages left out on purpose, by reason (a Slack subtype, "bot", "empty")."""
    problems: list[str] = field(default_factory=list)


class InputError(Exception):
    """The input cannot be ingested; `problems` lists every reason, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


# -- shared checks ------------------------------------------------------------------------


def _check_text(text: str, where: str, parsed: Parsed) -> bool:
    if len(text) > MAX_CLAIM_CHARS:
        parsed.problems.append(
            f"{where}: the claim has {len(text)} characters; the limit is {MAX_CLAIM_CHARS}"
        )
        return False
    return True


def _check_source(value: object, where: str, parsed: Parsed) -> str | None:
    if not isinstance(value, str) or not value.strip():
        parsed.problems.append(f"{where}: `source` must be a non-empty string")
        return None
    if len(value.strip()) > MAX_SOURCE_CHARS:
        parsed.problems.append(f"{where}: `source` is longer than {MAX_SOURCE_CHARS} characters")
        return None
    return value.strip()


def _decode(data: bytes, where: str, parsed: Parsed) -> str | None:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        parsed.problems.append(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})")
        return None


def _read(path: Path) -> bytes:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise InputError([f"{path}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MB"])
        return path.read_bytes()
    except OSError as exc:
        raise InputError([f"{path}: cannot read: {exc.strerror or exc}"]) from None


def parse_time(value: object) -> datetime:
    """RFC 3339 / ISO 8601 (no offset: UTC), or Unix seconds (milliseconds above 1e11)."""
    if isinstance(value, bool):
        raise ValueError("expected an RFC 3339 time or Unix seconds, not true/false")
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"{value} is not a usable Unix time") from None
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"\d+(\.\d+)?", text):
            return parse_time(float(text))
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(
                f"{value!r} is not an RFC 3339 time (e.g. 2025-01-31T12:00:00Z) or Unix seconds"
            ) from None
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    raise ValueError("expected an RFC 3339 time or Unix seconds")


# -- .txt ---------------------------------------------------------------------------------


def parse_txt(path: Path, source: str | None, data: bytes | None = None) -> Parsed:
    parsed = Parsed("txt")
    if not source or not source.strip():
        parsed.problems.append(
            f"{path}: --source is required for a .txt file (who makes these claims?)"
        )
        return parsed
    text = _decode(_read(path) if data is None else data, str(path), parsed)
    if text is None:
        return parsed
    checked = _check_source(source, "--source", parsed)
    paragraph: list[str] = []
    start = 0
    lines = text.splitlines()
    for number, line in enumerate([*lines, ""], start=1):
        if line.strip():
            if not paragraph:
                start = number
            paragraph.append(line.rstrip())
            continue
        if paragraph:
            claim = "\n".join(paragraph).strip()
            where = f"{path}:{start}"
            if _check_text(claim, where, parsed) and checked:
                parsed.claims.append(Claim(claim, checked, where))
            paragraph = []
    if not parsed.claims and not parsed.problems:
        parsed.problems.append(f"{path}: no claims in the file (it is empty)")
    return parsed


# -- .jsonl -------------------------------------------------------------------------------


def parse_jsonl(path: Path, source: str | None, data: bytes | None = None) -> Parsed:
    parsed = Parsed("jsonl")
    default = _check_source(source, "--source", parsed) if source is not None else None
    raw = _read(path) if data is None else data
    for number, line in enumerate(raw.splitlines(), start=1):
        where = f"{path}:{number}"
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            parsed.problems.append(f"{where}: not valid JSON ({exc})")
            continue
        if not isinstance(row, dict):
            parsed.problems.append(f"{where}: expected a JSON object with `text` and `source`")
            continue
        text = row.get("text")
        if not isinstance(text, str):
            parsed.problems.append(f"{where}: `text` is missing or not a string")
            continue
        if not text.strip():
            parsed.problems.append(f"{where}: `text` is empty")
            continue
        ok = _check_text(text, where, parsed)
        if "source" in row:
            row_source = _check_source(row["source"], where, parsed)
        elif default is not None:
            row_source = default
        else:
            parsed.problems.append(f"{where}: no `source` (give it on the line, or --source)")
            row_source = None
        observed = None
        if row.get("timestamp") is not None:
            try:
                observed = parse_time(row["timestamp"])
            except ValueError as exc:
                parsed.problems.append(f"{where}: `timestamp`: {exc}")
                ok = False
        metadata = row.get("metadata") or {}
        if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
        ):
            parsed.problems.append(f"{where}: `metadata` must be an object of strings")
            ok = False
        elif len(metadata) > MAX_METADATA:
            parsed.problems.append(f"{where}: `metadata` has more than {MAX_METADATA} entries")
            ok = False
        if ok and row_source is not None:
            parsed.claims.append(Claim(text, row_source, where, dict(metadata), observed))
    if not parsed.claims and not parsed.problems:
        parsed.problems.append(f"{path}: no claims in the file (it is empty)")
    return parsed


# -- Slack exports ------------------------------------------------------------------------


def _reader(file: Path) -> Callable[[], bytes]:
    return lambda: _read(file)


def _folder_files(root: Path) -> Iterator[tuple[str, Callable[[], bytes]]]:
    for file in sorted(root.rglob("*.json")):
        if file.is_file():
            relative = file.relative_to(root).as_posix()
            yield relative, _reader(file)


def _zip_files(archive: zipfile.ZipFile, label: str) -> Iterator[tuple[str, Callable[[], bytes]]]:
    for info in sorted(archive.infolist(), key=lambda i: i.filename):
        name = info.filename
        parts = PurePosixPath(name).parts
        if info.is_dir() or not name.endswith(".json"):
            continue
        if "__MACOSX" in parts or any(part.startswith(".") for part in parts):
            continue

        def load(info: zipfile.ZipInfo = info) -> bytes:
            if info.file_size > MAX_FILE_BYTES:
                raise InputError([f"{label}:{info.filename}: larger than the limit"])
            try:
                return archive.read(info)
            except (zipfile.BadZipFile, OSError, EOFError, RuntimeError) as exc:
                raise InputError([f"{label}:{info.filename}: cannot read ({exc})"]) from None

        yield name, load


def _load_json(load: Callable[[], bytes], where: str, parsed: Parsed) -> Any:
    try:
        data = load()
    except InputError as exc:
        parsed.problems.extend(exc.problems)
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        parsed.problems.append(f"{where}: not valid JSON ({exc})")
        return None


def _user_names(users: Any, where: str, parsed: Parsed) -> dict[str, str]:
    if not isinstance(users, list):
        parsed.problems.append(f"{where}: expected a list of users")
        return {}
    names: dict[str, str] = {}
    for user in users:
        if not isinstance(user, dict) or not isinstance(user.get("id"), str):
            continue
        profile = user.get("profile")
        if not isinstance(profile, dict):
            profile = {}
        for candidate in (
            profile.get("display_name"),
            profile.get("real_name"),
            user.get("real_name"),
            user.get("name"),
        ):
            if isinstance(candidate, str) and candidate.strip():
                names[user["id"]] = candidate.strip()
                break
    return names


def slack_text(text: str, users: dict[str, str]) -> str:
    """Slack's markup as plain text: <@U1> -> @name, <#C1|general> -> #general,
    <https://x|label> -> label (https://x), <!here> -> @here; &amp; &lt; &gt; unescaped."""

    def replace(match: re.Match[str]) -> str:
        inner = match.group(1)
        target, _, label = inner.partition("|")
        if target.startswith("@"):
            user = target[1:]
            return "@" + (users.get(user) or label or user)
        if target.startswith("#"):
            return "#" + (label or target[1:])
        if target.startswith("!"):
            return label or "@" + target[1:].split("^", 1)[0]
        if label and label != target:
            return f"{label} ({target.removeprefix('mailto:')})"
        return target.removeprefix("mailto:")

    plain = _SLACK_MARKUP.sub(replace, text)
    return plain.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _slack_messages(
    messages: Any,
    channel: str,
    where: str,
    users: dict[str, str],
    source: str,
    parsed: Parsed,
) -> None:
    if not isinstance(messages, list):
        parsed.problems.append(f"{where}: expected a list of messages")
        return
    for number, message in enumerate(messages, start=1):
        at = f"{where} message {number}"
        if not isinstance(message, dict):
            parsed.problems.append(f"{at}: expected a message object")
            continue
        subtype = message.get("subtype")
        if subtype is not None and subtype not in KEEP_SUBTYPES:
            parsed.skipped[str(subtype)] += 1
            continue
        if message.get("bot_id") or message.get("bot_profile"):
            parsed.skipped["bot"] += 1
            continue
        text = message.get("text", "")
        if not isinstance(text, str):
            parsed.problems.append(f"{at}: `text` is not a string")
            continue
        ts = message.get("ts")
        if not isinstance(ts, str) or not _SLACK_TS.fullmatch(ts):
            parsed.problems.append(f"{at}: `ts` is missing or not a Slack timestamp")
            continue
        user = message.get("user", "")
        if not isinstance(user, str):
            parsed.problems.append(f"{at}: `user` is not a string")
            continue
        claim = slack_text(text, users).strip()
        if not claim:
            parsed.skipped["empty"] += 1
            continue
        if not _check_text(claim, at, parsed):
            continue
        metadata = {"channel": channel, "user": user, "ts": ts}
        if user in users:
            metadata["user_name"] = users[user]
        observed = datetime.fromtimestamp(float(ts), UTC)
        parsed.claims.append(Claim(claim, source, at, metadata, observed))


def parse_slack(path: Path, source: str | None) -> Parsed:
    parsed = Parsed("slack")
    checked = _check_source(source, "--source", parsed) if source is not None else SLACK_SOURCE
    if checked is None:
        return parsed
    archive: zipfile.ZipFile | None = None
    if path.is_dir():
        files = list(_folder_files(path))
    else:
        try:
            archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            parsed.problems.append(f"{path}: not a readable zip file ({exc})")
            return parsed
        files = list(_zip_files(archive, str(path)))
    try:
        days = [
            (name, load)
            for name, load in files
            if _DAY_FILE.fullmatch(PurePosixPath(name).name) and len(PurePosixPath(name).parts) > 1
        ]
        if not days:
            parsed.problems.append(
                f"{path}: no channel messages found; a Slack export holds one folder per"
                " channel of YYYY-MM-DD.json files"
            )
            return parsed
        # The export's root is the folder holding the channel folders.
        root = PurePosixPath(days[0][0]).parent.parent
        users: dict[str, str] = {}
        for name, load in files:
            if PurePosixPath(name) == root / "users.json":
                where = f"{path}:{name}" if archive else str(path / name)
                users = _user_names(_load_json(load, where, parsed), where, parsed)
        for name, load in days:
            where = f"{path}:{name}" if archive else str(path / name)
            channel = PurePosixPath(name).parent.name
            messages = _load_json(load, where, parsed)
            if messages is not None:
                _slack_messages(messages, channel, where, users, checked, parsed)
    finally:
        if archive is not None:
            archive.close()
    if not parsed.claims and not parsed.problems:
        parsed.problems.append(f"{path}: the export holds no messages to ingest")
    return parsed


# -- any input ----------------------------------------------------------------------------


def detect_format(path: Path) -> Format:
    if path.is_dir() or path.suffix.lower() == ".zip":
        return "slack"
    if path.suffix.lower() == ".txt":
        return "txt"
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return "jsonl"
    raise InputError(
        [
            f"{path}: cannot tell the format from the name; expected a Slack export (.zip or"
            " folder), .txt or .jsonl, or give --format"
        ]
    )


def parse_input(path: Path, source: str | None = None, format: Format | None = None) -> Parsed:
    """Every claim of the input, checked; raises InputError listing every problem."""
    if not path.exists():
        raise InputError([f"{path}: no such file or folder"])
    kind = format or detect_format(path)
    if kind == "slack":
        parsed = parse_slack(path, source)
    elif path.is_dir():
        raise InputError([f"{path}: is a folder; only a Slack export can be a folder"])
    elif kind == "txt":
        parsed = parse_txt(path, source)
    else:
        parsed = parse_jsonl(path, source)
    if parsed.problems:
        raise InputError(parsed.problems)
    return parsed


# -- sending ------------------------------------------------------------------------------


@dataclass
class Result:
    claim: Claim
    decision: dict[str, Any] | None = None
    error: MemoryApiError | None = None


@dataclass
class Report:
    total: int
    results: list[Result]
    stopped: MemoryApiError | None = None

    @property
    def sent(self) -> list[Result]:
        return [r for r in self.results if r.decision is not None]

    @property
    def failed(self) -> list[Result]:
        return [r for r in self.results if r.error is not None]

    def statuses(self) -> Counter[str]:
        return Counter(r.decision["status"] for r in self.sent if r.decision)

    def redactions(self) -> Counter[str]:
        return Counter(
            kind for r in self.sent if r.decision for kind in r.decision["redacted_kinds"]
        )


def send_claims(
    client: MemoryClient,
    claims: list[Claim],
    concurrency: int = 4,
    advance: Callable[[], None] = lambda: None,
) -> Report:
    """Remember every claim, at most `concurrency` at a time; stop submitting at the first
    answer that means no claim can go through."""
    results: list[Result | None] = [None] * len(claims)
    stopped: MemoryApiError | None = None

    def one(claim: Claim) -> dict[str, Any]:
        return client.remember(claim.text, claim.source, claim.metadata, claim.observed_at)

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        pending: dict[Future[dict[str, Any]], int] = {}
        index = 0
        while index < len(claims) or pending:
            while stopped is None and index < len(claims) and len(pending) < concurrency:
                pending[pool.submit(one, claims[index])] = index
                index += 1
            if not pending:
                break
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                position = pending.pop(future)
                try:
                    results[position] = Result(
                        claims[position], decision=future.result()["decision"]
                    )
                except MemoryApiError as error:
                    results[position] = Result(claims[position], error=error)
                    if error.status in FATAL_STATUSES and stopped is None:
                        stopped = error
                advance()
    return Report(len(claims), [r for r in results if r is not None], stopped)


# -- output -------------------------------------------------------------------------------


def summary_json(path: Path, parsed: Parsed, report: Report) -> dict[str, Any]:
    return {
        "input": str(path),
        "format": parsed.format,
        "claims": report.total,
        "sent": len(report.sent),
        "skipped": dict(sorted(parsed.skipped.items())),
        "statuses": dict(sorted(report.statuses().items())),
        "stored": sum(1 for r in report.sent if r.decision and r.decision["stored"]),
        "redacted": dict(sorted(report.redactions().items())),
        "errors": [
            {
                "where": r.claim.where,
                "status": r.error.status,
                "type": r.error.type,
                "message": r.error.message,
            }
            for r in report.failed
            if r.error is not None
        ],
        "stopped": str(report.stopped) if report.stopped is not None else None,
        "results": [
            {
                "where": r.claim.where,
                "source": r.claim.source,
                "decision_id": r.decision["decision_id"],
                "status": r.decision["status"],
                "stored": r.decision["stored"],
                "quarantine_id": r.decision["quarantine_id"],
                "redacted_kinds": r.decision["redacted_kinds"],
            }
            for r in report.sent
            if r.decision is not None
        ],
    }


def print_summary(parsed: Parsed, report: Report) -> None:
    statuses = report.statuses()
    table = Table(title="ingest summary", show_edge=False, pad_edge=False, title_justify="left")
    table.add_column("")
    table.add_column("claims", justify="right")
    for status in ("accept", "warn", "review", "quarantine", "reject"):
        table.add_row(status, str(statuses.get(status, 0)))
    table.add_section()
    stored = sum(1 for r in report.sent if r.decision and r.decision["stored"])
    table.add_row("stored in verified memory", str(stored))
    table.add_row("held (review, quarantine, reject)", str(len(report.sent) - stored))
    redactions = report.redactions()
    redacted_claims = sum(1 for r in report.sent if r.decision and r.decision["redacted_kinds"])
    kinds = ", ".join(f"{kind} x{count}" for kind, count in sorted(redactions.items()))
    table.add_row("with secrets redacted", f"{redacted_claims}" + (f"  ({kinds})" if kinds else ""))
    skipped = sum(parsed.skipped.values())
    reasons = ", ".join(f"{why} {count}" for why, count in sorted(parsed.skipped.items()))
    table.add_row("skipped", f"{skipped}" + (f"  ({reasons})" if reasons else ""))
    table.add_row("errors", str(len(report.failed)))
    not_sent = report.total - len(report.results)
    if not_sent:
        table.add_row("not sent", str(not_sent))
    out.print(table)
    for result in report.failed[:MAX_PROBLEMS_SHOWN]:
        err.print(Text(f"{result.claim.where}: {result.error}"), style="red")
    if len(report.failed) > MAX_PROBLEMS_SHOWN:
        err.print(f"... and {len(report.failed) - MAX_PROBLEMS_SHOWN} more error(s)")


def _report_problems(problems: list[str]) -> None:
    for problem in problems[:MAX_PROBLEMS_SHOWN]:
        err.print(Text(problem), style="red")
    if len(problems) > MAX_PROBLEMS_SHOWN:
        err.print(f"... and {len(problems) - MAX_PROBLEMS_SHOWN} more problem(s)")
    n = len(problems)
    err.print(Text(f"error: {n} problem{'s' if n != 1 else ''} in the input; nothing was sent"))


def ingest_command(
    path: Annotated[
        Path,
        typer.Argument(
            metavar="PATH", help="A Slack export (.zip or folder), a .txt or a .jsonl file."
        ),
    ],
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            "-s",
            help="Who makes the claims: required for .txt, the default for .jsonl rows,"
            " overrides 'Slack' for exports.",
        ),
    ] = None,
    format: Annotated[
        str | None, typer.Option("--format", help="slack, txt or jsonl; default: by the name.")
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, max=16, help="Claims in flight at once.")
    ] = 4,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Parse and check the input; send nothing.")
    ] = False,
    remote: RemoteOption = DEFAULT_REMOTE,
    token: TokenOption = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Send every message of a Slack export, .txt or .jsonl file through the memory gate."""
    if format is not None and format not in FORMATS:
        raise typer.BadParameter(f"choose one of {', '.join(FORMATS)}", param_hint="--format")
    try:
        parsed = parse_input(path, source, format)  # type: ignore[arg-type]
    except InputError as exc:
        _report_problems(exc.problems)
        raise typer.Exit(2) from None
    if dry_run:
        by_source = Counter(claim.source for claim in parsed.claims)
        payload = {
            "input": str(path),
            "format": parsed.format,
            "claims": len(parsed.claims),
            "sources": dict(sorted(by_source.items())),
            "skipped": dict(sorted(parsed.skipped.items())),
        }
        if json_output:
            out.print_json(data=payload)
        else:
            sources = ", ".join(f"{name} {count}" for name, count in sorted(by_source.items()))
            out.print(
                Text(f"{path}: {len(parsed.claims)} claim(s) ready ({sources}); nothing sent")
            )
        return
    progress = Progress(
        TextColumn("remembering"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    )
    with MemoryClient(remote, resolve_token(token)) as client, progress:
        task = progress.add_task("remembering", total=len(parsed.claims))
        report = send_claims(client, parsed.claims, concurrency, lambda: progress.advance(task))
    if json_output:
        sys.stdout.write(orjson.dumps(summary_json(path, parsed, report)).decode() + "\n")
    else:
        print_summary(parsed, report)
    if report.stopped is not None:
        sent = len(report.sent)
        err.print(
            Text(
                f"error: stopped after {sent} of {report.total} claim(s): {explain(report.stopped)}"
            ),
            style="red",
        )
        raise typer.Exit(1)
    if report.failed:
        raise typer.Exit(1)
