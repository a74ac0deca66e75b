"""`mithril policy`: check a policy file, make gateway API keys and their hashes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import orjson
import typer
from rich.console import Console
from rich.table import Table

from mithril.gateway.policy import ROUTES, PolicyBook, PolicyError, RoutePolicy, hash_key, new_key

policy_app = typer.Typer(
    help="Policy files: validate them, make gateway API keys.", no_args_is_help=True
)

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def _output(policy: RoutePolicy) -> str:
    kinds = policy.output.kinds
    shown = "all kinds" if not kinds else kinds[0] if len(kinds) == 1 else f"{len(kinds)} kinds"
    return f"{policy.output.mode} ({shown})"


def _upstream(policy: RoutePolicy) -> str:
    return f"{policy.upstream.host} · key {policy.upstream.key_source}"


@policy_app.command()
def check(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The policy file (YAML).")],
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the summary (secrets masked) as JSON.")
    ] = False,
) -> None:
    """Validate FILE and print the effective policy of every tenant on every route."""
    try:
        book = PolicyBook.load(file)
    except PolicyError as exc:
        for problem in exc.problems:
            err.print(problem, markup=False)
        n = len(exc.problems)
        err.print(f"{file}: {n} problem{'s' if n != 1 else ''}; not loaded", markup=False)
        raise typer.Exit(1) from None
    if json_output:
        sys.stdout.write(orjson.dumps(book.describe(), option=orjson.OPT_INDENT_2).decode())
        sys.stdout.write("\n")
        return
    keys = "required" if book.requires_keys else "off (every caller is tenant 'default')"
    admin = book.describe()["admin_token"] or "not set (generated at start-up)"
    out.print(f"{file}: valid  ·  gateway keys {keys}  ·  admin token {admin}", markup=False)
    table = Table(show_lines=False)
    for column in ("tenant", "route", "mode", "threshold", "detectors", "output"):
        table.add_column(column)
    table.add_column("upstream")
    table.add_column("models")
    for name in book.tenant_names:
        for route in ROUTES:
            policy = book.resolve(name, route)
            table.add_row(
                name,
                route,
                policy.mode,
                f"{policy.threshold:g}",
                ",".join(policy.detectors) or "none",
                _output(policy),
                _upstream(policy),
                ",".join(policy.models) or "all",
            )
        table.add_section()
    out.print(table)
    for warning in book.warnings:
        err.print(f"warning: {warning}", markup=False)


@policy_app.command("hash-key")
def hash_key_command(
    key: Annotated[
        str | None, typer.Argument(metavar="KEY", help="The key; '-' or none reads stdin.")
    ] = None,
) -> None:
    """Print the `sha256:...` hash of a gateway API key, as a policy file stores it."""
    if key is None or key == "-":
        if sys.stdin.isatty():
            raise typer.BadParameter("give KEY, or pipe it on stdin")
        key = sys.stdin.read()
    key = key.strip()
    if not key:
        raise typer.BadParameter("the key is empty")
    out.print(hash_key(key), markup=False)


@policy_app.command("new-key")
def new_key_command() -> None:
    """Print a new gateway API key (give it to the tenant) and its hash (for the file)."""
    key = new_key()
    out.print(f"key:  {key}", markup=False)
    out.print(f"hash: {hash_key(key)}", markup=False)
