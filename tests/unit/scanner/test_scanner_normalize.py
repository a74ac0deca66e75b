# ruff: noqa: RUF001  (lookalike characters are what these tests are about)
"""The normalised view and the decoders."""

import base64

import pytest

from mithril.services.scanner import decode, normalize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1gn0r3", "ignore"),
        ("r3v3a1", "reveai"),  # l is canonicalised to i
        ("|gnore", "ignore"),
        ("$ystem", "system"),
        ("ignоre", "ignore"),  # Cyrillic o
        ("ιnstructιons", "instructions"),  # Greek iota
        ("ｉｇｎｏｒｅ", "ignore"),  # fullwidth
        ("𝐢𝐠𝐧𝐨𝐫𝐞", "ignore"),  # mathematical bold
        ("ig\u200bno\u200dre", "ignore"),
        ("\u202eignore", "ignore"),
        ("i g n o r e", "ignore"),
        ("i.g.n.o.r.e", "ignore"),
        ("a b c d  e f g h", "abcd efgh"),
        ("\\i\\g\\n\\o\\r\\e\\ \\a\\l\\l", "\\ignore aii"),
        ("c:\\users\\a\\b\\c", "c:\\users\\a\\b\\c"),
        ("ignore _ all", "ignore aii"),
        ("ignore ; all . now", "ignore aii now"),
        ("snake_case", "snake case"),
        ("hello!", "heiio!"),
        ("version 3 of 10", "version 3 of 10"),
    ],
)
def test_normalize_window(text: str, expected: str) -> None:
    folded, offsets = normalize.normalize_window(text)
    assert " ".join(folded.split()) == expected
    assert len(offsets) == len(folded)
    assert offsets == sorted(offsets)


def test_tag_characters_reveal_hidden_ascii() -> None:
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "hi")
    assert normalize.normalize_window("x" + hidden)[0] == "xhi"


def test_view_is_windowed_and_maps_back() -> None:
    text = "plain words " * 200 + "1gn0r3 this" + " more plain" * 200
    view = normalize.build_view(text)
    assert len(view.text) < len(text) / 2
    start = view.text.index("ignore")
    mapped = view.original_span(start, start + 6)
    assert mapped is not None
    assert text[mapped[0] : mapped[1]] == "1gn0r3"


def test_fast_fold_fallback_has_no_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(normalize, "BUDGET", 10)
    view = normalize.build_view("1gn0r3 " * 500)
    assert view.original_span(0, 3) is None
    assert view.text.startswith("1gn0r3")


def test_cased_view_makes_styled_letters_plain_and_keeps_case() -> None:
    """Fullwidth, mathematical and circled letters become plain, invisible characters go,
    tag characters become the ASCII they hide; case, lookalikes, `l` and `_` stay."""
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "Hi")
    text = "Call ＤＡＮ or 𝐒\u200b𝐓𝐀𝐍, not 𝐝𝐚𝐧 or Ⓐ; snake_case stays, Сyrillic too " + hidden
    folded, offsets = normalize.cased_window(text)
    assert folded == "Call DAN or STAN, not dan or A; snake_case stays, Сyrillic too Hi"
    assert normalize.cased_view(text).text == folded
    assert len(offsets) == len(folded) and offsets == sorted(offsets)
    assert [text[offsets[folded.index(c)]] for c in "DST"] == ["Ｄ", "𝐒", "𝐓"]


def test_cased_view_is_windowed_and_maps_back(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "plain words " * 200 + "you are 𝗦𝗧𝗔𝗡 now" + " more plain" * 200
    view = normalize.cased_view(text)
    assert len(view.text) < len(text) / 2
    start = view.text.index("STAN")
    mapped = view.original_span(start, start + 4)
    assert mapped is not None and text[mapped[0] : mapped[1]] == "𝗦𝗧𝗔𝗡"
    monkeypatch.setattr(normalize, "BUDGET", 10)
    whole = normalize.cased_view(text)
    assert whole.original_span(0, 3) is None
    assert whole.text == normalize.cased_window(text)[0]


@pytest.mark.parametrize(
    ("text", "changes"),
    [
        ("a \U0001f469\u200d\U0001f4bb coding", False),  # an emoji's joiner
        ("plain text", False),
        ("S\u200bTAN", True),  # hidden inside a word
        ("𝐒𝐓𝐀𝐍", True),
        ("ＤＡＮ", True),
        ("x" + chr(0xE0041), True),  # a tag character
    ],
)
def test_cased_view_is_needed_only_where_a_rule_could_read_differently(
    text: str, changes: bool
) -> None:
    assert normalize.cased_changes(text) is changes


def test_canonical_pattern_keeps_escapes_and_groups() -> None:
    assert normalize.canonical_pattern(r"(?i)\bfollow\b") == r"(?i)\bfoiiow\b"
    assert normalize.canonical_pattern(r"\x{006C}[[:alpha:]]L") == r"\x{006C}[[:alpha:]]i"
    assert normalize.canonical_pattern(r"(?P<lab>l)") == r"(?P<lab>i)"


def test_decode_segments_validate_text() -> None:
    good = base64.b64encode(b"hello there, this is text").decode()
    segments = decode.decode_segments(f"x {good} y", {"base64"})
    assert [s.text for s in segments] == ["hello there, this is text"]
    assert segments[0].start == 2
    binary = base64.b64encode(bytes(range(200))).decode()
    assert decode.decode_segments(binary, {"base64"}) == []


def test_decoders_are_bounded() -> None:
    blob = " ".join(base64.b64encode(f"message number {i}".encode()).decode() for i in range(100))
    assert len(decode.decode_segments(blob, {"base64"})) == decode.MAX_SEGMENTS
