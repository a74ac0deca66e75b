"""What in an OpenAI request a user or a tool controls, as text segments to scan.

Chat: every message of every role (the application's own system/developer prompt only
when the policy says so), string content or the text parts of a content array, tool and
function results, and the arguments of tool calls the client claims the assistant made.
Legacy completions: `prompt` as a string or a list of strings (token-id prompts carry no
text to scan). Embeddings: `input`, as retrieved content. The request body itself is
forwarded untouched.
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


@dataclass(frozen=True, slots=True)
class Segment:
    origin: Origin
    text: str
    param: str
    """Where it came from in the request, for error messages: "messages[2].content"."""


def _invalid(message: str, param: str) -> ApiError:
    return ApiError(400, message, code="invalid_request", param=param)


def _content_segments(content: Any, origin: Origin, param: str) -> list[Segment]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Segment(origin, content, param)] if content else []
    if not isinstance(content, list):
        raise _invalid(f"{param} must be a string, an array of content parts, or null", param)
    segments = []
    for index, part in enumerate(content):
        part_param = f"{param}[{index}]"
        if not isinstance(part, dict):
            raise _invalid(f"{part_param} must be an object", part_param)
        if part.get("type") in _TEXT_PART_TYPES:
            text = part.get("text")
            if not isinstance(text, str):
                raise _invalid(f"{part_param}.text must be a string", f"{part_param}.text")
            if text:
                segments.append(Segment(origin, text, f"{part_param}.text"))
        elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
            segments.append(Segment(origin, part["refusal"], f"{part_param}.refusal"))
    return segments


def _tool_call_segments(message: dict[str, Any], param: str) -> list[Segment]:
    segments = []
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise _invalid(f"{param}.tool_calls must be an array", f"{param}.tool_calls")
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if isinstance(arguments, str) and arguments:
            segments.append(
                Segment(
                    Origin.ASSISTANT, arguments, f"{param}.tool_calls[{index}].function.arguments"
                )
            )
    legacy = message.get("function_call")
    if isinstance(legacy, dict) and isinstance(legacy.get("arguments"), str):
        segments.append(
            Segment(Origin.ASSISTANT, legacy["arguments"], f"{param}.function_call.arguments")
        )
    return segments


def chat_segments(body: dict[str, Any], scan_system_prompt: bool) -> list[Segment]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _invalid("messages must be a non-empty array", "messages")
    segments: list[Segment] = []
    for index, message in enumerate(messages):
        param = f"messages[{index}]"
        if not isinstance(message, dict):
            raise _invalid(f"{param} must be an object", param)
        role = message.get("role")
        origin = _ROLE_ORIGINS.get(role) if isinstance(role, str) else None
        if origin is None:
            raise _invalid(
                f"{param}.role must be one of {', '.join(_ROLE_ORIGINS)}", f"{param}.role"
            )
        if origin is Origin.SYSTEM and not scan_system_prompt:
            continue
        segments += _content_segments(message.get("content"), origin, f"{param}.content")
        if origin is Origin.ASSISTANT:
            segments += _tool_call_segments(message, param)
    return segments


def completion_segments(body: dict[str, Any]) -> list[Segment]:
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return [Segment(Origin.USER, prompt, "prompt")] if prompt else []
    if isinstance(prompt, list):
        segments = []
        for index, item in enumerate(prompt):
            if isinstance(item, str):
                if item:
                    segments.append(Segment(Origin.USER, item, f"prompt[{index}]"))
            elif not isinstance(item, int | list):
                raise _invalid("prompt must be a string, an array of strings, or tokens", "prompt")
        return segments
    raise _invalid("prompt must be a string, an array of strings, or tokens", "prompt")


def embedding_segments(body: dict[str, Any]) -> list[Segment]:
    """`input` as a string or a list of strings, as retrieved content; token ids carry no
    text to scan."""
    value = body.get("input")
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise _invalid("input must be a string, an array of strings, or tokens", "input")
    segments = []
    for index, item in enumerate(items):
        param = "input" if isinstance(value, str) else f"input[{index}]"
        if isinstance(item, str):
            if item:
                segments.append(Segment(Origin.RETRIEVAL, item, param))
        elif not isinstance(item, int | list):
            raise _invalid("input must be a string, an array of strings, or tokens", "input")
    return segments


def model_of(body: dict[str, Any]) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _invalid("model must be a non-empty string", "model")
    return model
