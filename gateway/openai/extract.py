"""What in an OpenAI request a user or a tool controls, as text segments to scan.

Chat: every message of every role (the application's own system/developer prompt only
when the policy says so), string content or the text parts of a content array, tool and
function results, and the arguments of tool calls the client claims the assistant made.
Legacy completions: `prompt` as a string or a list of strings (token-id prompts carry no
text to scan). Embeddings: `input`, as retrieved content. The request body itself is
forwarded untouched, unless the policy redacts credentials or personal data from the input
(`replace_texts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mithril.domain import Origin
from mithril.gateway.errors import ApiError

_ROLE_ORIGINS = {
    "user": Origin.USER,
    "system": Origin.SYSTEM,
    "developer": Origin.SYSTEM,
    "assistant": Origin.ASSISTANT,
    "tool": Origin.TOOL,
    "function": Origin.TOOL,
}
_TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
_TOKENS_OR_TEXT = "must be a string, an array of strings, or tokens"


BodyPath = tuple[str | int, ...]
"""Keys and indices from the request body down to one text: ("messages", 2, "content")."""


def param_of(path: BodyPath) -> str:
    """The path as OpenAI errors name a parameter: "messages[2].content"."""
    return "".join(
        f"[{step}]" if isinstance(step, int) else (f".{step}" if index else step)
        for index, step in enumerate(path)
    )


@dataclass(frozen=True, slots=True)
class Segment:
    origin: Origin
    text: str
    path: BodyPath
    """Where it is in the request body."""

    @property
    def param(self) -> str:
        return param_of(self.path)


def replace_texts(body: dict[str, Any], replacements: dict[BodyPath, str]) -> None:
    """Put each text in `body` at its path (a segment's), in place."""
    for path, text in replacements.items():
        parent: Any = body
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = text


def _invalid(path: BodyPath, problem: str) -> ApiError:
    param = param_of(path)
    return ApiError(400, f"{param} {problem}", code="invalid_request", param=param)


def _content_segments(content: Any, origin: Origin, path: BodyPath) -> list[Segment]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Segment(origin, content, path)] if content else []
    if not isinstance(content, list):
        raise _invalid(path, "must be a string, an array of content parts, or null")
    segments = []
    for index, part in enumerate(content):
        part_path = (*path, index)
        if not isinstance(part, dict):
            raise _invalid(part_path, "must be an object")
        if part.get("type") in _TEXT_PART_TYPES:
            text = part.get("text")
            if not isinstance(text, str):
                raise _invalid((*part_path, "text"), "must be a string")
            if text:
                segments.append(Segment(origin, text, (*part_path, "text")))
        elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
            segments.append(Segment(origin, part["refusal"], (*part_path, "refusal")))
    return segments


def _tool_call_segments(message: dict[str, Any], path: BodyPath) -> list[Segment]:
    segments = []
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise _invalid((*path, "tool_calls"), "must be an array")
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if isinstance(arguments, str) and arguments:
            segments.append(
                Segment(
                    Origin.ASSISTANT,
                    arguments,
                    (*path, "tool_calls", index, "function", "arguments"),
                )
            )
    legacy = message.get("function_call")
    if isinstance(legacy, dict) and isinstance(legacy.get("arguments"), str):
        segments.append(
            Segment(Origin.ASSISTANT, legacy["arguments"], (*path, "function_call", "arguments"))
        )
    return segments


def chat_segments(body: dict[str, Any], scan_system_prompt: bool) -> list[Segment]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _invalid(("messages",), "must be a non-empty array")
    segments: list[Segment] = []
    for index, message in enumerate(messages):
        path: BodyPath = ("messages", index)
        if not isinstance(message, dict):
            raise _invalid(path, "must be an object")
        role = message.get("role")
        origin = _ROLE_ORIGINS.get(role) if isinstance(role, str) else None
        if origin is None:
            raise _invalid((*path, "role"), f"must be one of {', '.join(_ROLE_ORIGINS)}")
        if origin is Origin.SYSTEM and not scan_system_prompt:
            continue
        segments += _content_segments(message.get("content"), origin, (*path, "content"))
        if origin is Origin.ASSISTANT:
            segments += _tool_call_segments(message, path)
    return segments


def completion_segments(body: dict[str, Any]) -> list[Segment]:
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return [Segment(Origin.USER, prompt, ("prompt",))] if prompt else []
    if isinstance(prompt, list):
        segments = []
        for index, item in enumerate(prompt):
            if isinstance(item, str):
                if item:
                    segments.append(Segment(Origin.USER, item, ("prompt", index)))
            elif not isinstance(item, int | list):
                raise _invalid(("prompt",), _TOKENS_OR_TEXT)
        return segments
    raise _invalid(("prompt",), _TOKENS_OR_TEXT)


def embedding_segments(body: dict[str, Any]) -> list[Segment]:
    """`input` as a string or a list of strings, as retrieved content; token ids carry no
    text to scan."""
    value = body.get("input")
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise _invalid(("input",), _TOKENS_OR_TEXT)
    segments = []
    for index, item in enumerate(items):
        path: BodyPath = ("input",) if isinstance(value, str) else ("input", index)
        if isinstance(item, str):
            if item:
                segments.append(Segment(Origin.RETRIEVAL, item, path))
        elif not isinstance(item, int | list):
            raise _invalid(("input",), _TOKENS_OR_TEXT)
    return segments


def model_of(body: dict[str, Any]) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _invalid(("model",), "must be a non-empty string")
    return model
