"""`mithril policy check | hash-key | new-key`, in-process."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mithril.cli.policy import policy_app
from mithril.gateway.policy import EXAMPLE_POLICY, hash_key

app = typer.Typer()
app.add_typer(policy_app, name="policy")

EXAMPLE_ENV = {
    "MITHRIL_ADMIN_TOKEN": "example-admin-token-123",
    "OPENAI_API_KEY": "sk-example-upstream-key",
    "RESEARCH_VLLM_KEY": "vllm-example-upstream-key",
}


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_check_prints_every_tenant_and_route(runner: CliRunner) -> None:
    result = runner.invoke(
        app, ["policy", "check", EXAMPLE_POLICY], env={**EXAMPLE_ENV, "COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.endswith("valid  ·  gateway keys required  ·  admin token $MITHRIL_ADMIN_TOKEN")
    rows = [line for line in result.stdout.splitlines() if "/v1/" in line]
    assert len(rows) == 12
    acme_chat = next(r for r in rows if "acme" in r and "/v1/chat/completions" in r)
    for cell in ("block", "0.4", "scanner,secrets", "block (all kinds)", "gpt-4o*,gpt-4.1-mini"):
        assert cell in acme_chat
    assert "api.openai.com · key $OPENAI_API_KEY" in acme_chat
    research = next(r for r in rows if "research" in r and "/v1/completions" in r)
    assert "monitor" in research and "vllm.internal:8000 · key $RESEARCH_VLLM_KEY" in research
    for secret in EXAMPLE_ENV.values():
        assert secret not in result.output


def test_check_json_is_the_masked_summary(runner: CliRunner) -> None:
    result = runner.invoke(app, ["policy", "check", "--json", EXAMPLE_POLICY], env=EXAMPLE_ENV)
    assert result.exit_code == 0
    summary = json.loads(result.stdout)
    assert set(summary["tenants"]) == {"acme", "research"}
    upstream = summary["tenants"]["research"]["routes"]["/v1/scan"]["upstream"]
    assert upstream["api_key"] == "**********"
    for secret in EXAMPLE_ENV.values():
        assert secret not in result.stdout


def test_check_lists_every_problem_and_fails(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("defaults: {mode: blok, treshold: 1}\nroutes: {/v1/x: {}}\n")
    result = runner.invoke(app, ["policy", "check", str(path)], env={})
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0] == f"{path}: defaults.mode: expected 'block', 'log' or 'monitor' (got 'blok')"
    assert lines[1].startswith(f"{path}: defaults.treshold: unknown option (did you mean")
    assert lines[2].startswith(f"{path}: routes./v1/x: unknown route '/v1/x'")
    assert lines[-1] == f"{path}: 3 problems; not loaded"
    assert result.stdout == ""


def test_check_missing_env_and_missing_file(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["policy", "check", EXAMPLE_POLICY], env={"OPENAI_API_KEY": ""})
    assert result.exit_code == 1
    assert "admin_token_env: environment variable MITHRIL_ADMIN_TOKEN is not set" in result.stderr
    assert "defaults.upstream.api_key_env: environment variable OPENAI_API_KEY is empty" in (
        result.stderr
    )
    result = runner.invoke(app, ["policy", "check", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 1
    assert "nope.yaml: cannot read: No such file or directory" in result.stderr


def test_hash_key_from_argument_and_stdin(runner: CliRunner) -> None:
    result = runner.invoke(app, ["policy", "hash-key", "mk-abc"])
    assert (result.exit_code, result.stdout) == (0, hash_key("mk-abc") + "\n")
    result = runner.invoke(app, ["policy", "hash-key"], input="mk-abc\n")
    assert (result.exit_code, result.stdout) == (0, hash_key("mk-abc") + "\n")
    result = runner.invoke(app, ["policy", "hash-key", "-"], input="  \n")
    assert result.exit_code == 2
    assert "the key is empty" in result.output


def test_new_key_prints_a_key_and_its_hash(runner: CliRunner) -> None:
    result = runner.invoke(app, ["policy", "new-key"])
    assert result.exit_code == 0
    key_line, hash_line = result.stdout.splitlines()
    key = key_line.removeprefix("key:  ")
    assert re.fullmatch(r"mk-[A-Za-z0-9_-]{40}", key)
    assert hash_line == f"hash: {hash_key(key)}"
