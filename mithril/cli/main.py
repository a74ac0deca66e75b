"""`mithril`: scan and redact text, run the services, run the benchmarks."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

import mithril
from mithril.cli import memory
from mithril.cli.components import COMPONENTS
from mithril.cli.ingest import ingest_command
from mithril.cli.memory import memory_app
from mithril.cli.memory_client import DEFAULT_REMOTE, resolve_token
from mithril.cli.pipeline import CliError, Pipeline, open_pipeline
from mithril.cli.policy import policy_app

app = typer.Typer(
    help="Mithril, a self-hosted AI firewall.", no_args_is_help=True, add_completion=False
)
bench_app = typer.Typer(help="Benchmarks; results go to benchmark/results/.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")
app.add_typer(policy_app, name="policy")
app.add_typer(memory_app, name="memory")
app.command("ingest")(ingest_command)

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False)

RemoteOption = Annotated[
    str | None,
    typer.Option(
        "--remote", metavar="URL", help="Use a running gateway (e.g. http://127.0.0.1:8080)."
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]
JsonlOption = Annotated[
    Path | None,
    typer.Option("--jsonl", metavar="FILE", help="Read JSON lines with a `text` field."),
]
ORIGINS = ("user", "system", "assistant", "tool", "retrieval")


def _version(value: bool) -> None:
    if value:
        out.print(f"mithril {mithril.__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print version.")
    ] = False,
) -> None:
    """Mithril, a self-hosted AI firewall."""


def _read_text(text: str | None) -> str:
    if text is not None and text != "-":
        return text
    if sys.stdin.isatty():
        raise typer.BadParameter("give TEXT, or pipe it on stdin")
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise typer.BadParameter(f"stdin is not valid UTF-8 ({exc.reason})") from exc


def _run(work: Callable[[Pipeline], Awaitable[int]], remote: str | None) -> None:
    async def runner() -> int:
        pipeline = open_pipeline(remote)
        try:
            return await work(pipeline)
        finally:
            await pipeline.close()

    try:
        code = asyncio.run(runner())
    except CliError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from exc
    raise typer.Exit(code)


def _print_json(payload: Any) -> None:
    sys.stdout.write(orjson.dumps(payload).decode() + "\n")


def _findings_table(findings: list[dict[str, Any]]) -> Table:
    table = Table(show_edge=False, pad_edge=False)
    for column in ("rule", "category", "severity", "confidence", "view", "span", "message"):
        table.add_column(column)
    for f in findings:
        span = f"{f['start']}-{f['end']}" if f["start"] is not None else "-"
        table.add_row(
            f["rule_id"],
            f["category"],
            f["severity"],
            f"{f['confidence']:.2f}",
            f["view"],
            span,
            f["message"],
        )
    return table


def _print_decision(decision: dict[str, Any]) -> None:
    action = decision["action"]
    color = "red" if action == "block" else ("yellow" if decision["flagged"] else "green")
    rules = sorted({f["rule_id"] for f in decision["findings"]})
    summary = f"[{color}]{action.upper()}[/{color}]  score {decision['score']:.2f}"
    summary += f"  threshold {decision['threshold']:.2f}  {len(decision['findings'])} finding(s)"
    if rules:
        summary += f": {', '.join(rules)}"
    out.print(summary)
    if "redacted_text" in decision:
        out.print("to send instead:", decision["redacted_text"], markup=False, highlight=False)
    if decision["findings"]:
        out.print(_findings_table(decision["findings"]))


def _read_lines(path: Path) -> list[bytes]:
    try:
        return path.read_bytes().splitlines()
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc.strerror}") from exc


async def _jsonl(
    lines: list[bytes], handle: Callable[[str], Awaitable[dict[str, Any]]], label: str
) -> int:
    """One JSON result per input line, in order; a bad line gets an error object."""
    failures = 0
    progress = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    )
    with progress:
        task = progress.add_task(label, total=len(lines))
        for number, raw in enumerate(lines, start=1):
            if raw.strip():
                try:
                    row = orjson.loads(raw)
                    text = row.get("text") if isinstance(row, dict) else None
                    if not isinstance(text, str):
                        raise ValueError("the line has no string `text` field")
                    _print_json(await handle(text))
                except (orjson.JSONDecodeError, ValueError) as exc:
                    failures += 1
                    _print_json({"line": number, "error": str(exc)})
            progress.advance(task)
    if failures:
        err.print(f"[yellow]{failures} line(s) could not be processed[/yellow]")
    return 1 if failures else 0


@app.command()
def scan(
    text: Annotated[str | None, typer.Argument(help="Text to scan; omit or - for stdin.")] = None,
    json_output: JsonOption = False,
    jsonl: JsonlOption = None,
    origin: Annotated[
        str, typer.Option(help=f"Who controls the text: {', '.join(ORIGINS)}.")
    ] = "user",
    remote: RemoteOption = None,
) -> None:
    """Decide whether text is an attack (or leaks a credential), with its findings."""
    if origin not in ORIGINS:
        raise typer.BadParameter(f"choose one of {', '.join(ORIGINS)}", param_hint="--origin")

    lines = _read_lines(jsonl) if jsonl is not None else None

    async def work(pipeline: Pipeline) -> int:
        if lines is not None:
            return await _jsonl(lines, lambda t: pipeline.scan(t, origin), "scanning")
        decision = await pipeline.scan(_read_text(text), origin)
        if json_output:
            _print_json(decision)
        else:
            _print_decision(decision)
        return 0

    _run(work, remote)


@app.command()
def redact(
    text: Annotated[str | None, typer.Argument(help="Text to redact; omit or - for stdin.")] = None,
    json_output: JsonOption = False,
    jsonl: JsonlOption = None,
    remote: RemoteOption = None,
) -> None:
    """Print text with credentials and PII replaced by [REDACTED:<kind>]."""

    lines = _read_lines(jsonl) if jsonl is not None else None

    async def work(pipeline: Pipeline) -> int:
        if lines is not None:
            return await _jsonl(lines, pipeline.redact, "redacting")
        result = await pipeline.redact(_read_text(text))
        if json_output:
            _print_json(result)
            return 0
        sys.stdout.write(result["text"] + ("" if result["text"].endswith("\n") else "\n"))
        kinds = sorted({f["kind"] for f in result["findings"]})
        err.print(f"redacted: {', '.join(kinds)}" if kinds else "redacted: nothing found")
        return 0

    _run(work, remote)


@app.command()
def up(
    home: Annotated[
        Path | None, typer.Option(help="State folder (MITHRIL_HOME); default ~/.mithril.")
    ] = None,
    database_url: Annotated[
        str | None,
        typer.Option(
            "--database-url",
            metavar="URL",
            help="One database for every store (event log, reputation, memory ledger), e.g."
            " postgresql://user@host/db; default SQLite files under MITHRIL_HOME.",
        ),
    ] = None,
) -> None:
    """Start every service and the gateway, wait until all are SERVING, stop on Ctrl-C."""
    from mithril.cli.supervisor import check_database_url, run_all

    if database_url is not None:
        try:
            database_url = check_database_url(database_url)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--database-url") from None
    raise typer.Exit(run_all(list(COMPONENTS.values()), home, out, database_url))


@app.command()
def serve(
    service: Annotated[str, typer.Argument(help=f"One of: {', '.join(COMPONENTS)}.")],
) -> None:
    """Run one service (or the gateway) in the foreground, configured by its MITHRIL_* env."""
    component = COMPONENTS.get(service)
    if component is None:
        raise typer.BadParameter(f"choose one of {', '.join(COMPONENTS)}", param_hint="SERVICE")
    import runpy

    runpy.run_module(component.module, run_name="__main__", alter_sys=True)


@app.command()
def mcp(remote: memory.RemoteOption = DEFAULT_REMOTE, token: memory.TokenOption = None) -> None:
    """Serve shared memory to agents as an MCP server over stdio (remember, recall, review)."""
    from mithril.cli.mcp_server import serve

    serve(remote, resolve_token(token))


@bench_app.command("detection")
def bench_detection(
    datasets: Annotated[
        Path | None, typer.Option(help="Datasets folder; default ../shared/datasets.")
    ] = None,
    results: Annotated[Path, typer.Option(help="Where to write results.")] = Path(
        "benchmark/results"
    ),
) -> None:
    """Detection quality per source (TPR, FPR, precision, F1, misses by category)."""
    from mithril.benchmark.cli import detection

    detection(datasets, results, out)


@bench_app.command("latency")
def bench_latency(
    results: Annotated[Path, typer.Option(help="Where to write results.")] = Path(
        "benchmark/results"
    ),
    repeat: Annotated[int, typer.Option(help="Timed runs per size (median reported).")] = 7,
) -> None:
    """Fast tier vs a bare RE2 set at 200 B to 1 MB, and the FirewallService round trip."""
    from mithril.benchmark.cli import latency

    latency(results, repeat, out)


@bench_app.command("embedding")
def bench_embedding(
    datasets: Annotated[
        Path | None, typer.Option(help="Datasets folder; default ../shared/datasets.")
    ] = None,
    results: Annotated[Path, typer.Option(help="Where to write results.")] = Path(
        "benchmark/results"
    ),
    threads: Annotated[int, typer.Option(help="Threads for both engines; 0 = all cores.")] = 0,
) -> None:
    """Embedding encoder vs sentence-transformers: batch-1 p50, throughput, fidelity."""
    from mithril.benchmark.cli import embedding

    embedding(datasets, results, threads, out)


@bench_app.command("gateway")
def bench_gateway(
    results: Annotated[Path, typer.Option(help="Where to write results.")] = Path(
        "benchmark/results"
    ),
    requests: Annotated[int, typer.Option(help="Requests per run at concurrency 64.")] = 2000,
    runs: Annotated[int, typer.Option(help="Alternating runs per concurrency (median).")] = 3,
) -> None:
    """The gateway vs a bare pass-through proxy: throughput, p50/p99, CPU, TTFT."""
    from mithril.benchmark.cli import gateway

    gateway(results, requests, runs, out)


@bench_app.command("memory")
def bench_memory(
    results: Annotated[Path, typer.Option(help="Where to write memory.md and .json.")] = Path(
        "benchmark/results"
    ),
) -> None:
    """The memory gate against a labelled poisoning set, without an LLM and with an LLM
    stand-in for Cognee: catch and false-hold rates, secrets on disk, timings."""
    from mithril.benchmark.memory import bench

    bench(results, out)


def run() -> None:
    app()


if __name__ == "__main__":
    run()
