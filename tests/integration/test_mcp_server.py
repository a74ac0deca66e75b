"""`mithril mcp` driven by the official MCP client library over stdio, against a real
gateway, memory gate (embedded Cognee) and reputation service.

The server is the real command in a subprocess (`mithril mcp --remote URL --token T`);
the client lists its tools and calls each one. A planted credential never comes back, and
gateway errors come back as tool errors (`isError`), with the server still serving.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import free_port
from tests.memory_stack import MemoryStack, shared_stack

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

AWS_KEY = "AKIAQ3EGRZLNW7T2X5PB"
TOOLS = {
    "mithril_remember",
    "mithril_recall",
    "mithril_quarantine_list",
    "mithril_quarantine_review",
}
HELD = ("review", "quarantine", "reject")


def _command() -> tuple[str, list[str]]:
    """The installed `mithril` script when there is one (what users run), else the module."""
    script = Path(sys.executable).with_name("mithril")
    if script.exists():
        return str(script), []
    return sys.executable, ["-c", "from mithril.cli.main import run; run()"]


@asynccontextmanager
async def mcp_session(url: str, token: str) -> AsyncIterator[ClientSession]:
    command, prefix = _command()
    params = StdioServerParameters(
        command=command,
        args=[*prefix, "mcp", "--remote", url, "--token", token],
        env={"MITHRIL_HOME": os.environ.get("MITHRIL_HOME", ""), "PYTHONUNBUFFERED": "1"},
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@pytest.fixture(scope="module")
def stack(request: pytest.FixtureRequest) -> MemoryStack:
    return shared_stack(request)


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def _source(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


async def test_lists_exactly_the_four_tools_with_schemas(stack: MemoryStack) -> None:
    async with mcp_session(stack.url, stack.token) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(listed) == TOOLS
        for tool in listed.values():
            assert tool.description and len(tool.description) > 40
            schema = tool.input_schema
            assert schema["type"] == "object"
            assert schema["additionalProperties"] is False
            for name, prop in schema["properties"].items():
                assert prop.get("description"), (tool.name, name)
            assert tool.output_schema and tool.output_schema["type"] == "object"

        remember = listed["mithril_remember"].input_schema
        assert remember["required"] == ["claim", "source"]
        assert remember["properties"]["claim"]["type"] == "string"
        assert remember["properties"]["metadata"]["type"] == "object"
        recall = listed["mithril_recall"].input_schema
        assert recall["required"] == ["query"]
        assert recall["properties"]["top_k"]["type"] == "integer"
        held = listed["mithril_quarantine_list"].input_schema
        assert "required" not in held or held["required"] == []
        assert held["properties"]["status"]["enum"] == list(HELD)
        assert held["properties"]["include_reviewed"]["type"] == "boolean"
        review = listed["mithril_quarantine_review"].input_schema
        assert review["required"] == ["id", "verdict", "reviewer"]
        assert review["properties"]["verdict"]["enum"] == ["approve", "reject"]
        assert "note" in review["properties"]
        assert listed["mithril_recall"].annotations.read_only_hint is True


async def test_remember_hold_review_and_recall(stack: MemoryStack) -> None:
    async with mcp_session(stack.url, stack.token) as session:
        source = _source("unknown-agent")
        claim = f"The staging database for team {source} moved to db-staging-7.internal port 5433."
        remembered = await session.call_tool(
            "mithril_remember", {"claim": claim, "source": source, "metadata": {"ticket": "T-42"}}
        )
        assert not remembered.is_error, _text(remembered)
        decision = remembered.structured_content["decision"]
        assert decision["status"] in HELD, decision  # an unknown agent is not trusted outright
        assert not decision["stored"] and decision["quarantine_id"]
        held_id = decision["quarantine_id"]
        text = _text(remembered)
        assert decision["decision_id"] in text and decision["status"] in text and held_id in text
        assert "reputation" in text  # the signals are summarised

        listed = await session.call_tool("mithril_quarantine_list", {"status": decision["status"]})
        assert not listed.is_error, _text(listed)
        ids = [item["id"] for item in listed.structured_content["data"]]
        assert held_id in ids
        assert held_id in _text(listed) and source in _text(listed)
        everything = await session.call_tool("mithril_quarantine_list", {"include_reviewed": True})
        assert held_id in [item["id"] for item in everything.structured_content["data"]]

        reviewed = await session.call_tool(
            "mithril_quarantine_review",
            {"id": held_id, "verdict": "approve", "reviewer": "mcp-test", "note": "checked"},
        )
        assert not reviewed.is_error, _text(reviewed)
        assert reviewed.structured_content["id"] == held_id
        assert reviewed.structured_content["review_verdict"] == "approve"
        assert reviewed.structured_content["reviewer"] == "mcp-test"
        assert "verified memory" in _text(reviewed)

        pending = await session.call_tool("mithril_quarantine_list", {})
        assert held_id not in [item["id"] for item in pending.structured_content["data"]]

        recalled = await session.call_tool(
            "mithril_recall", {"query": f"Where did the staging database of {source} move?"}
        )
        assert not recalled.is_error, _text(recalled)
        memories = recalled.structured_content["memories"]
        assert any("db-staging-7.internal" in m["text"] for m in memories), memories
        assert "db-staging-7.internal" in _text(recalled)

        # A claim is reviewed once: the gateway's 409 is a tool error, not a crash.
        again = await session.call_tool(
            "mithril_quarantine_review",
            {"id": held_id, "verdict": "reject", "reviewer": "mcp-test"},
        )
        assert again.is_error
        assert "409" in _text(again)


async def test_a_planted_key_never_comes_back(stack: MemoryStack) -> None:
    async with mcp_session(stack.url, stack.token) as session:
        source = _source("deploy-bot")
        result = await session.call_tool(
            "mithril_remember",
            {"claim": f"Deploys use the AWS key {AWS_KEY} for the prod bucket.", "source": source},
        )
        assert not result.is_error, _text(result)
        decision = result.structured_content["decision"]
        assert "aws_access_key" in decision["redacted_kinds"]
        assert AWS_KEY not in _text(result)
        assert AWS_KEY not in json.dumps(result.structured_content)
        assert "aws_access_key" in _text(result)
        held = await session.call_tool("mithril_quarantine_list", {"include_reviewed": True})
        assert AWS_KEY not in _text(held) and AWS_KEY not in json.dumps(held.structured_content)
        recalled = await session.call_tool(
            "mithril_recall", {"query": "AWS key for the prod bucket"}
        )
        assert AWS_KEY not in _text(recalled)


async def test_gateway_errors_are_tool_errors(stack: MemoryStack) -> None:
    async with mcp_session(stack.url, stack.token) as session:
        unknown = await session.call_tool(
            "mithril_quarantine_review",
            {"id": "no-such-claim", "verdict": "approve", "reviewer": "mcp-test"},
        )
        assert unknown.is_error
        assert "404" in _text(unknown)

        invalid = await session.call_tool(
            "mithril_quarantine_review", {"id": "x", "verdict": "maybe", "reviewer": "mcp-test"}
        )
        assert invalid.is_error and "verdict" in _text(invalid)
        missing = await session.call_tool("mithril_remember", {"claim": "no source"})
        assert missing.is_error and "source" in _text(missing)
        unknown_tool = await session.call_tool("mithril_forget", {})
        assert unknown_tool.is_error

        # The gateway's own validation (an empty claim after trimming) is an error too.
        blank = await session.call_tool("mithril_remember", {"claim": "   ", "source": "someone"})
        assert blank.is_error and "400" in _text(blank)

        # Still serving after every error.
        assert {tool.name for tool in (await session.list_tools()).tools} == TOOLS
        ok = await session.call_tool("mithril_quarantine_list", {"status": "review"})
        assert not ok.is_error, _text(ok)


async def test_wrong_token_and_no_gateway_are_tool_errors(stack: MemoryStack) -> None:
    async with mcp_session(stack.url, "not-the-admin-token") as session:
        refused = await session.call_tool("mithril_quarantine_list", {})
        assert refused.is_error and "401" in _text(refused)
        assert "not-the-admin-token" not in _text(refused)

    async with mcp_session(f"http://127.0.0.1:{free_port()}", stack.token) as session:
        down = await session.call_tool("mithril_recall", {"query": "anything"})
        assert down.is_error and "cannot reach" in _text(down)
        assert {tool.name for tool in (await session.list_tools()).tools} == TOOLS


async def test_rest_and_mcp_agree(stack: MemoryStack) -> None:
    """What the tool returns is the gateway's JSON, not a re-shaped copy."""
    async with mcp_session(stack.url, stack.token) as session:
        result = await session.call_tool("mithril_quarantine_list", {"include_reviewed": True})
        async with httpx.AsyncClient(base_url=stack.url, headers=stack.bearer) as client:
            rest = (await client.get("/v1/memory/quarantine?include_reviewed=true")).json()
        assert [c["id"] for c in result.structured_content["data"]] == [
            c["id"] for c in rest["data"]
        ]
