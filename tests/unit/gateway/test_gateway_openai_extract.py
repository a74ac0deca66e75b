"""What the gateway reads out of OpenAI requests and responses to scan."""

from __future__ import annotations

import orjson
import pytest

from mithril.domain import Origin
from mithril.gateway.errors import ApiError
from mithril.gateway.openai import extract
from mithril.gateway.openai.output import response_fields


def test_chat_segments_cover_every_controlled_part() -> None:
    body = {
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "developer", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "hi"},
                    {"type": "image_url", "image_url": {"url": "x"}},
                ],
            },
            {
                "role": "assistant",
                "content": "calling",
                "tool_calls": [
                    {
                        "id": "1",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"q": 1}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "1", "content": "result"},
            {"role": "function", "name": "f", "content": "legacy result"},
        ]
    }
    segments = extract.chat_segments(body, scan_system_prompt=False)
    assert [(s.origin, s.text, s.param) for s in segments] == [
        (Origin.USER, "hi", "messages[2].content[0].text"),
        (Origin.ASSISTANT, "calling", "messages[3].content"),
        (Origin.ASSISTANT, '{"q": 1}', "messages[3].tool_calls[0].function.arguments"),
        (Origin.TOOL, "result", "messages[4].content"),
        (Origin.TOOL, "legacy result", "messages[5].content"),
    ]
    with_system = extract.chat_segments(body, scan_system_prompt=True)
    assert [s.param for s in with_system[:2]] == ["messages[0].content", "messages[1].content"]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({}, "messages"),
        ({"messages": []}, "messages"),
        ({"messages": ["hi"]}, "messages[0]"),
        ({"messages": [{"role": "alien", "content": "x"}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]},
            "messages[0].content[0].text",
        ),
    ],
)
def test_malformed_chat_is_a_400_naming_the_param(body, param) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ApiError) as caught:
        extract.chat_segments(body, scan_system_prompt=False)
    assert caught.value.status == 400 and caught.value.param == param


@pytest.mark.parametrize(
    ("prompt", "texts"),
    [("a", ["a"]), (["a", "", "b"], ["a", "b"]), ([1, 2, 3], []), ([[1, 2], [3]], [])],
)
def test_completion_prompts(prompt, texts) -> None:  # type: ignore[no-untyped-def]
    assert [s.text for s in extract.completion_segments({"prompt": prompt})] == texts


def test_embedding_inputs_are_retrieved_content() -> None:
    segments = extract.embedding_segments({"input": ["doc one", "doc two"]})
    assert {s.origin for s in segments} == {Origin.RETRIEVAL}
    assert [s.param for s in segments] == ["input[0]", "input[1]"]
    assert extract.embedding_segments({"input": "one"})[0].param == "input"


@pytest.mark.parametrize(
    ("body", "segments_of"),
    [
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                    {
                        "role": "assistant",
                        "content": "calling",
                        "tool_calls": [{"function": {"name": "f", "arguments": '{"q": 1}'}}],
                        "function_call": {"name": "g", "arguments": "{}"},
                    },
                    {"role": "tool", "content": "result", "extra": [1, 2]},
                ],
                "temperature": 0,
            },
            lambda body: extract.chat_segments(body, scan_system_prompt=True),
        ),
        ({"prompt": ["a", [1, 2], "b"], "n": 2}, extract.completion_segments),
        ({"prompt": "a"}, extract.completion_segments),
        ({"input": ["doc one", 7, "doc two"]}, extract.embedding_segments),
        ({"input": "doc"}, extract.embedding_segments),
    ],
)
def test_each_segments_text_can_be_replaced_where_it_was_read(body, segments_of) -> None:  # type: ignore[no-untyped-def]
    """Redacting the input rewrites exactly the texts that were scanned, nothing else."""
    before = orjson.loads(orjson.dumps(body))
    segments = segments_of(body)
    extract.replace_texts(body, {s.path: f"<{i}>" for i, s in enumerate(segments)})
    assert [s.text for s in segments_of(body)] == [f"<{i}>" for i in range(len(segments))]
    extract.replace_texts(body, {s.path: s.text for s in segments})
    assert body == before


def test_model_is_required() -> None:
    with pytest.raises(ApiError):
        extract.model_of({"messages": []})


def test_response_fields_write_back_in_place() -> None:
    body = orjson.loads(
        b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "a",'
        b' "tool_calls": [{"function": {"name": "f", "arguments": "b"}}]}},'
        b' {"index": 1, "text": "c"}], "usage": {"total_tokens": 3}}'
    )
    fields = response_fields(body)
    assert [(f.param, f.text) for f in fields] == [
        ("choices[0].message.content", "a"),
        ("choices[0].message.tool_calls[0].function.arguments", "b"),
        ("choices[1].text", "c"),
    ]
    for field in fields:
        field.write(field.text.upper())
    assert body["choices"][0]["message"]["content"] == "A"
    assert body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == "B"
    assert body["choices"][1]["text"] == "C" and body["usage"] == {"total_tokens": 3}
