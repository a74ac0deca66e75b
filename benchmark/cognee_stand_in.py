"""An OpenAI-compatible server on loopback that stands in for the LLM behind Cognee's
``remember()`` (add + cognify: graph extraction and chunk summaries).

No LLM runs on these machines. This server reuses the gateway benchmark's stand-in
(`stand_in_upstream.FakeUpstream`: same routes, same request log) and only changes the
chat replies: a request that carries a JSON schema (``response_format`` of type
``json_schema``, or the schema Cognee writes into the system prompt for its
``json_object`` fallback) gets a JSON instance of that schema built from the request's
own text. Knowledge graphs get one node per capitalised term of the text (at most
`MAX_NODES`) linked in a chain, summaries get the text's first sentence. A request
without a schema (Cognee's connection test) gets the fixed content.

It lets Cognee's LLM write path run end to end (LLM round trips, graph and summary
storage, their embeddings) so its cost can be timed. It decides nothing: the memory gate
never asks it anything (the benchmark runs the gate without a judge), so detection
figures do not depend on it.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

import orjson
from aiohttp import web

from mithril.benchmark.stand_in_upstream import FakeUpstream

MAX_NODES = 4
MODEL = "stand-in-graph"
_TERM = re.compile(r"\b[A-Z][A-Za-z0-9-]+(?:\s+[A-Z][A-Za-z0-9-]+)*")
_FENCED_JSON = re.compile(r"```json\s*(\{.*?\})\s*```", re.DOTALL)


def _terms(text: str) -> list[str]:
    found: list[str] = []
    for match in _TERM.finditer(text):
        term = match.group(0).strip()
        if term.lower() not in {t.lower() for t in found} and len(term) > 2:
            found.append(term)
        if len(found) == MAX_NODES:
            break
    return found or ["Claim"]


def _first_sentence(text: str) -> str:
    sentence = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    return sentence[:300] or "A stored note."


def _slug(term: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", term.lower()).strip("_") or "node"


class _Builder:
    """A JSON instance of a JSON schema (with $defs), filled from the request text."""

    def __init__(self, schema: dict[str, Any], text: str) -> None:
        self.defs: dict[str, Any] = schema.get("$defs") or schema.get("definitions") or {}
        self.text = text
        self.terms = _terms(text)

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self.resolve(self.defs.get(ref.rsplit("/", 1)[-1], {}))
        return node

    def build(self, node: dict[str, Any], name: str = "") -> Any:
        node = self.resolve(node)
        for key in ("anyOf", "oneOf"):
            if key in node:
                options = [o for o in node[key] if self.resolve(o).get("type") != "null"]
                return self.build(options[0] if options else {}, name)
        if node.get("allOf"):
            return self.build(node["allOf"][0], name)
        if "enum" in node:
            return node["enum"][0]
        kind = node.get("type", "object" if "properties" in node else "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        if kind == "object":
            properties: dict[str, Any] = node.get("properties", {})
            if {"nodes", "edges"} <= properties.keys():
                return self.graph(properties)
            return {key: self.build(value, key) for key, value in properties.items()}
        if kind == "array":
            return [self.build(node.get("items", {}), name)]
        if kind == "integer":
            return 0
        if kind == "number":
            return 0.0
        if kind == "boolean":
            return False
        if kind == "null":
            return None
        if name in ("summary", "description", "text", "content", "answer"):
            return _first_sentence(self.text)
        return self.terms[0]

    def graph(self, properties: dict[str, Any]) -> dict[str, Any]:
        item = self.resolve(self.resolve(properties["nodes"]).get("items", {}))
        nodes = []
        for term in self.terms:
            node = {
                key: self.build(value, key) for key, value in item.get("properties", {}).items()
            }
            node.update(
                id=_slug(term),
                name=term,
                type="Entity",
                description=f"{term}, as named in the note.",
            )
            if "label" in node:
                node["label"] = "Entity"
            nodes.append(node)
        edges = [
            {
                "source_node_id": _slug(a),
                "target_node_id": _slug(b),
                "relationship_name": "mentioned_with",
                "description": f"{a} is mentioned with {b}.",
            }
            for a, b in zip(self.terms, self.terms[1:], strict=False)
        ]
        graph: dict[str, Any] = {
            key: self.build(value, key)
            for key, value in properties.items()
            if key not in ("nodes", "edges")
        }
        return graph | {"nodes": nodes, "edges": edges}


def _schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    response_format = body.get("response_format") or {}
    if isinstance(response_format, dict):
        if response_format.get("type") == "json_schema":
            schema = (response_format.get("json_schema") or {}).get("schema")
            if isinstance(schema, dict):
                return schema
        if response_format.get("type") == "json_object":
            for message in body.get("messages", []):
                for match in _FENCED_JSON.finditer(str(message.get("content", ""))):
                    try:
                        schema = orjson.loads(match.group(1))
                    except orjson.JSONDecodeError:
                        continue
                    if isinstance(schema, dict) and "properties" in schema:
                        return schema
            return {"type": "object", "properties": {"summary": {"type": "string"}}}
    return None


def _user_text(body: dict[str, Any]) -> str:
    texts = [str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user"]
    return texts[-1] if texts else ""


class CogneeStandIn(FakeUpstream):
    """`FakeUpstream` whose chat replies satisfy the JSON schema a request asks for."""

    def __init__(self) -> None:
        super().__init__()
        self.behaviour.content = "test"
        self.schema_replies = 0

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body, error = await self._prelude(request)
        if error is not None:
            return error
        schema = _schema_of(body)
        if schema is None:
            content = self.behaviour.content
        else:
            self.schema_replies += 1
            content = orjson.dumps(_Builder(schema, _user_text(body)).build(schema)).decode()
        return web.json_response(
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", MODEL),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
            }
        )
