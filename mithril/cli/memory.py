"""`mithril memory`: shared agent memory through a running gateway's `/v1/memory/*` API.

    mithril memory remember "The VPN moved to vpn2.example.com" --source Slack
    mithril memory recall "where is the VPN"
    mithril memory quarantine [ID] [--status review|quarantine|reject] [--all]
    mithril memory review ID approve|reject [--reviewer NAME] [--note TEXT]
    mithril memory audit [--source S]
    mithril memory reputation [SOURCE] [--reset] [--all]
    mithril memory improve

Every command takes `--remote URL` (default http://127.0.0.1:8080), `--token T` (default
$MITHRIL_ADMIN_TOKEN, else MITHRIL_HOME/admin-token) and `--json` (the gateway's JSON as
is). Errors are one line on stderr and exit status 1.
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import orjson
import typer
from rich.console import Console, ConsoleDimensions
from rich.table import Table
from rich.text import Text

from mithril.cli.memory_client import (
    DEFAULT_REMOTE,
    TOKEN_ENV,
    MemoryApiError,
    MemoryClient,
    resolve_token,
)

T = TypeVar("T")

memory_app = typer.Typer(
    help="Shared agent memory through a running gateway: remember, recall, review, audit.",
    no_args_is_help=True,
)

PIPE_WIDTH = 200
"""Output that is not a terminal (a pipe, a file) has no width to fit: ids never wrap."""


class _Console(Console):
    @property  # type: ignore[override]
    def size(self) -> ConsoleDimensions:
        dimensions = Console.size.fget(self)  # type: ignore[attr-defined]
        if self.is_terminal or dimensions.width >= PIPE_WIDTH:
            return dimensions  # type: ignore[no-any-return]
        return ConsoleDimensions(PIPE_WIDTH, dimensions.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


def console(stderr: bool = False) -> Console:
    """A console on stdout (or stderr) as it is when printing, as wide as a pipe needs."""
    return _Console(stderr=stderr, highlight=False, soft_wrap=True)


out = console()
err = console(stderr=True)

RemoteOption = Annotated[
    str, typer.Option("--remote", metavar="URL", help="The gateway's base URL.")
]
TokenOption = Annotated[
    str | None,
    typer.Option(
        "--token",
        metavar="TOKEN",
        help=f"Admin token (or a gateway API key for remember/recall); default ${TOKEN_ENV},"
        " else MITHRIL_HOME/admin-token.",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the gateway's JSON.")]
PageSizeOption = Annotated[
    int | None, typer.Option("--page-size", min=1, max=500, help="Items per page.")
]
PageTokenOption = Annotated[
    str | None, typer.Option("--page-token", help="Continue from a previous page.")
]

STATUS_COLORS = {
    "accept": "green",
    "warn": "yellow",
    "review": "cyan",
    "quarantine": "magenta",
    "reject": "red",
}
HELD_STATUSES = ("review", "quarantine", "reject")
SIGNALS = ("reputation", "corroboration", "freshness", "contradiction", "danger")


# -- plumbing -----------------------------------------------------------------------------


def print_json(payload: Any) -> None:
    sys.stdout.write(orjson.dumps(payload).decode() + "\n")


def fail(message: str, code: int = 1) -> typer.Exit:
    err.print(Text(f"error: {message}"), style="red")
    return typer.Exit(code)


def explain(error: MemoryApiError) -> str:
    """One line for a failed call, with what to do about it when we know."""
    text = str(error)
    if error.param:
        text += f" [param {error.param}]"
    if error.status == 401:
        text += f"; pass --token, or set {TOKEN_ENV} (the token is in MITHRIL_HOME/admin-token)"
    elif error.status == 503:
        text += "; is the memory gate running? (`mithril up` starts every service)"
    return text


def call(remote: str, token: str | None, work: Callable[[MemoryClient], T]) -> T:
    """Run `work` against the gateway; any error is one line on stderr and exit 1."""
    with MemoryClient(remote, resolve_token(token)) as client:
        try:
            return work(client)
        except MemoryApiError as error:
            raise fail(explain(error)) from None


def _status(status: str) -> Text:
    return Text(status.upper(), style=STATUS_COLORS.get(status, ""))


def _time(value: str | None) -> str:
    return value[:16].replace("T", " ") if value else "-"


def _short(text: str, limit: int = 80) -> Text:
    flat = " ".join(text.split())
    return Text(flat if len(flat) <= limit else flat[: limit - 1] + "…")


IDS = frozenset({"id", "decision"})
"""Columns holding ids: never wrapped, so they can be copied (or grepped) whole."""


def _table(*columns: str) -> Table:
    table = Table(show_edge=False, pad_edge=False)
    for column in columns:
        if column in IDS:
            table.add_column(column, no_wrap=True, min_width=32)
        elif column in ("claim", "memory", "message", "reason"):
            table.add_column(column, ratio=1)
        else:
            table.add_column(column, no_wrap=column in ("status", "time", "held", "updated"))
    return table


def _next_page(token: str) -> None:
    if token:
        out.print(Text(f"more: --page-token {token}", style="dim"))


# -- rendering ----------------------------------------------------------------------------


def render_decision(decision: dict[str, Any]) -> None:
    line = Text()
    line.append_text(_status(decision["status"]))
    line.append(f"  trust {decision['trust_score']:.2f}")
    if decision.get("stored"):
        line.append("  stored in verified memory")
    elif decision.get("quarantine_id"):
        line.append(f"  held as {decision['quarantine_id']}")
    line.append(f"  decision {decision['decision_id']}", style="dim")
    out.print(line)
    if decision.get("redacted_kinds"):
        out.print(Text(f"redacted: {', '.join(decision['redacted_kinds'])}", style="yellow"))
    for reason in decision.get("reasons", []):
        out.print(Text(f"  - {reason}"))
    signals = _table("signal", "value", "weight")
    weights = decision.get("weights", {})
    for name in SIGNALS:
        value = decision.get("signals", {}).get(name, 0.0)
        weight = weights.get(name)
        signals.add_row(name, f"{value:.2f}", "-" if weight is None else f"{weight:.2f}")
    out.print(signals)
    if decision.get("findings"):
        findings = _table("rule", "detector", "category", "severity", "confidence", "message")
        for f in decision["findings"]:
            findings.add_row(
                f["rule_id"],
                f["detector"],
                f["category"],
                f["severity"],
                f"{f['confidence']:.2f}",
                Text(f["message"]),
            )
        out.print(findings)


def render_held(held: dict[str, Any]) -> None:
    verdict = held.get("review_verdict")
    state = f"reviewed: {verdict} by {held.get('reviewer') or '?'}" if verdict else "pending review"
    line = Text(f"{held['id']}  ")
    line.append_text(_status(held["status"]))
    line.append(f"  from {held['source']}  held {_time(held.get('create_time'))}  {state}")
    out.print(line)
    out.print(Text(held["claim"]))
    out.print()
    render_decision(held["decision"])


def render_held_list(page: dict[str, Any]) -> None:
    held = page["data"]
    if not held:
        out.print("no held claims")
        return
    table = _table("id", "status", "source", "trust", "held", "review", "claim")
    for item in held:
        verdict = item.get("review_verdict")
        table.add_row(
            item["id"],
            _status(item["status"]),
            Text(item["source"]),
            f"{item['decision']['trust_score']:.2f}",
            _time(item.get("create_time")),
            f"{verdict} ({item.get('reviewer')})" if verdict else "pending",
            _short(item["claim"]),
        )
    out.print(table)
    _next_page(page.get("next_page_token", ""))


# -- commands -----------------------------------------------------------------------------


def _metadata(pairs: list[str]) -> dict[str, str]:
    metadata: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="--meta")
        metadata[key.strip()] = value
    return metadata


@memory_app.command()
def remember(
    claim: Annotated[str, typer.Argument(help="The claim; - reads it from stdin.")],
    source: Annotated[
        str, typer.Option("--source", "-s", help="Who makes the claim, e.g. Slack or an agent.")
    ],
    meta: Annotated[
        list[str] | None,
        typer.Option("--meta", metavar="KEY=VALUE", help="Metadata stored with the claim."),
    ] = None,
    observed_at: Annotated[
        str | None, typer.Option("--observed-at", help="When it was observed (RFC 3339).")
    ] = None,
    remote: RemoteOption = DEFAULT_REMOTE,
    token: TokenOption = None,
    json_output: JsonOption = False,
) -> None:
    """Submit a claim; the gate decides whether it enters verified memory."""
    if claim == "-":
        claim = sys.stdin.read()
    metadata = _metadata(meta or [])
    result = call(remote, token, lambda c: c.remember(claim, source, metadata, observed_at))
    if json_output:
        print_json(result)
    else:
        render_decision(result["decision"])


@memory_app.command()
def recall(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    top_k: Annotated[
        int | None, typer.Option("--top-k", "-k", min=1, max=100, help="Most memories.")
    ] = None,
    remote: RemoteOption = DEFAULT_REMOTE,
    token: TokenOption = None,
    json_output: JsonOption = False,
) -> None:
    """Search verified memory (never held claims)."""
    result = call(remote, token, lambda c: c.recall(query, top_k))
    if json_output:
        print_json(result)
        return
    memories = result["memories"]
    if not memories:
        out.print("no verified memory matches")
        return
    table = _table("#", "score", "source", "confidence", "memory")
    for number, memory in enumerate(memories, start=1):
        table.add_row(
            str(number),
            f"{memory['score']:.2f}",
            Text(memory["source"]),
            Text("low", style="yellow") if memory["low_confidence"] else "verified",
            Text(memory["text"]),
        )
    out.print(table)


@memory_app.command()
def quarantine(
    held_id: Annotated[
        str | None, typer.Argument(metavar="ID", help="Show one held claim in full.")
    ] = None,
    status: Annotated[
        str | None, typer.Option("--status", help="Only review, quarantine or reject.")
    ] = None,
    include_reviewed: Annotated[
        bool, typer.Option("--all", help="Include claims reviewed already.")
    ] = False,
    page_size: PageSizeOption = None,
    page_token: PageTokenOption = None,
    remote: RemoteOption = DEFAULT_REMOTE,
    token: TokenOption = None,
    json_output: JsonOption = False,
) -> None:
    """List held claims (pending review by default), or show one with its decision."""
    if status is not None and status not in HELD_STATUSES:
        raise typer.BadParameter(f"choose one of {', '.join(HELD_STATUSES)}", param_hint="--status")
    if held_id is not None:
        held = call(remote, token, lambda c: c.quarantine_get(held_id))
        if json_output:
            print_json(held)
        else:
            render_held(held)
        return
    page = call(
        remote,
        token,
        lambda c: c.quarantine_list(status, include_reviewed, page_size, page_token),
    )
    if json_output:
        print_json(page)
    else:
        render_held_list(page)


@memory_app.command()
def review(
    held_id: Annotated[str, typer.Argument(metavar="ID", help="The held claim.")],
    verdict: Annotated[str, typer.Argument(help="approve (into verified memory) or reject.")],
    reviewer: Annotated[
        str | None, typer.Option("--reviewer", help="Who reviews; default your user name.")
    ] = None,
    note: Annotated[str, typer.Option("--note", help="Why.")] = "",
    remote: RemoteOption = DEFAULT_REMOTE,
    token: TokenOption = None,
    json_output: JsonOption = False,
) -> None:
    """Approve a held claim into verified memory, or reject it (once only)."""
    if verdict not in ("approve", "reject"):
        raise typer.BadParameter("choose approve or reject", param_hint="VERDICT")
    who = reviewer or _user()
    held = call(remote, token, lambda c: c.review(held_id, verdict, who, note))
    if json_output:
        print_json(held)
        return
    outcome = "approved into verified memory" if verdict == "approve" else "rejected"
    out.print(Text(f"{held['id']} {outcome} by {held.get('reviewer') or who}"))


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "cli"


@memory_app.command()
def audit(
    source: Annotated[str | None, typer.Option("--source", help="Only this source.")] = None,
    page_size: PageSizeOption = None,
    page_token: PageTokenOption = None,
    remote: RemoteOption = DEFAULT_REMOTE,
    token: TokenOption = None,
    json_output: JsonOption = False,
) -> None:
    """Gate decisions and reviews, newest first."""
    page = call(remote, token, lambda c: c.audit(source, page_size, page_token))
    if json_output:
        print_json(page)
        return
    if not page["data"]:
        out.print("no audit events")
        return
    table = _table("time", "event", "source", "status", "trust", "stored", "reviewer", "decision")
    for event in page["data"]:
        decision = event["decision"]
        table.add_row(
            _time(event.get("create_time")),
            event["event_type"],
            Text(event["source"]),
            _status(decision["status"]),
            f"{decision['trust_score']:.2f}",
            "yes" if decision["stored"] else "no",
            Text(event.get("reviewer") or "-"),
            decision["decision_id"],
        )
    out.print(table)
    _next_page(page.get("next_page_token", ""))


@memory_app.command()
def reputation(
    source: Annotated[
        str | None, typer.Argument(metavar="SOURCE", help="Show one source and its history.")
    ] = None,
    reset: Annotated[
        bool, typer.Option("--reset", help="Put SOURCE (or, with --all, every source) back.")
    ] = False,
    reset_all: Annotated[bool, typer.Option("--all", help="With --reset: every source.")] = False,
    page_size: PageSizeOption = None,
    page_token: PageTokenOption = None,
    remote: RemoteOption = DEFAULT_REMOTE,
    token: TokenOption = None,
    json_output: JsonOption = False,
) -> None:
    """Per-source trust: list every source, show one with its history, or reset."""
    if reset:
        if (source is None) == (not reset_all):
            raise typer.BadParameter("--reset needs SOURCE, or --all for every source")
        result = call(remote, token, lambda c: c.reputation_reset(source))
        if json_output:
            print_json(result)
        else:
            count = result["reset_count"]
            out.print(f"reset {count} source{'' if count == 1 else 's'} to their priors")
        return
    if reset_all:
        raise typer.BadParameter("--all only goes with --reset")
    if source is None:
        page = call(remote, token, lambda c: c.reputation_list(page_size, page_token))
        if json_output:
            print_json(page)
            return
        if not page["data"]:
            out.print("no sources yet")
            return
        table = _table("source", "score", "prior", "good", "bad", "updated")
        for item in page["data"]:
            table.add_row(
                Text(item["source"]),
                f"{item['score']:.3f}",
                f"{item['prior']:.3f}",
                str(item["good_count"]),
                str(item["bad_count"]),
                _time(item.get("update_time")),
            )
        out.print(table)
        _next_page(page.get("next_page_token", ""))
        return

    def both(client: MemoryClient) -> dict[str, Any]:
        return {
            "reputation": client.reputation_get(source),
            "history": client.reputation_history(source, page_size, page_token),
        }

    result = call(remote, token, both)
    if json_output:
        print_json(result)
        return
    item, history = result["reputation"], result["history"]
    out.print(
        Text(
            f"{item['source']}: score {item['score']:.3f} (prior {item['prior']:.3f}),"
            f" {item['good_count']} good, {item['bad_count']} bad"
        )
    )
    if not history["data"]:
        out.print("no changes recorded")
        return
    table = _table("time", "outcome", "old", "new", "reason", "decision")
    for change in history["data"]:
        table.add_row(
            _time(change.get("create_time")),
            change["outcome"],
            f"{change['old_score']:.3f}",
            f"{change['new_score']:.3f}",
            Text(change.get("reason") or "-"),
            change.get("decision_id") or "-",
        )
    out.print(table)
    _next_page(history.get("next_page_token", ""))


@memory_app.command()
def improve(
    remote: RemoteOption = DEFAULT_REMOTE,
    token: TokenOption = None,
    json_output: JsonOption = False,
) -> None:
    """Run the memory store's improvement pass over verified memory."""
    result = call(remote, token, lambda c: c.improve())
    if json_output:
        print_json(result)
    else:
        out.print(Text(result["summary"]))
