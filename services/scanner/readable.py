# ruff: noqa: RUF002  (lookalike characters are this module's subject)
"""The text as a model trained on plain text should read it: obfuscation undone, case kept.

The learned tiers embed what a text says. A sentence written in fullwidth or lookalike letters,
in leetspeak, with invisible characters between its letters, or base64-encoded, embeds as
noise, and the classifier learned that noise means attack (its training data holds obfuscated
attacks and no obfuscated benign text): a benign question in fullwidth letters scored 1.0,
and an attack in lookalike letters could score nothing. How a text is written is the rules'
business (`obfuscation.*`); what it says is the learned tiers'. So they are given `readable`:

1. a text that is English written in rot13 (far more of its first `ROT13_SAMPLE_WORDS` words
   are common English words once rotated, two in a short text with none as written; for a
   short text with too few of them, py3langid reads it as English once rotated) rotated
   back; base64, hex, URL-encoded and rot13 segments replaced by their decoded text, as the
   scanner's decoded views find them (`decode.py`);
2. NFKC (fullwidth, mathematical and circled letters become plain ones); invisible characters
   dropped; Unicode tag characters turned into the ASCII they hide;
3. where a lookalike letter (Cyrillic `о`, Greek `ι`) touches a Latin one, every lookalike
   in the text becomes Latin, keeping case (the English-only model reads no Cyrillic or
   Greek anyway; the multilingual rules see the raw text); but in a text with words of
   Cyrillic or Greek (a letter of theirs that looks like no Latin one: `д`, `ы`, `λ`) only
   the words mixing the two are folded: the multilingual tier reads that language, and a
   dagger in a table ("Waza†") had turned a Russian line under it into "зaбyдb bce";
4. leetspeak folded in words where `0 1 3 4 5 7 @ $` come before a letter ("1gn0r3",
   "pr3v10u5"; not "mp3", "3rd", "10th"), and in every word mixing them with letters
   ("bu7", "u5") once `WRITTEN_IN_LEET` such words show the text is leetspeak throughout.

Texts longer than `MAX_CHARS` are left alone. Unlike the normalised view (`normalize.py`,
made for rule matching: lower case, `l` folded to `i`), case and punctuation stay. Nothing
is done, and `readable` returns None, unless one of the scanner's normalisation or decoding
triggers occurs in the text.
"""

from __future__ import annotations

import codecs
import functools
import re
import unicodedata
from collections.abc import Iterator
from itertools import islice
from typing import Any

import re2

from mithril.services.invisible import INVISIBLE, UNTAGGED

from . import decode, normalize

WRITTEN_IN_LEET = 3
"""Words with a leet character before a letter that make a text leetspeak throughout."""
MAX_CHARS = 64 * 1024
"""Longer texts are left as they are (the learned tiers read them raw): bounds the work."""
MAX_LEET_WORD = 20
"""Longer words are identifiers, not leetspeak."""

_UNICODE = re2.compile(normalize.TRIGGERS["unicode"])
_LOOKALIKE = re2.compile(normalize.TRIGGERS["lookalike"])
_LEET_TRIGGER = re2.compile(normalize.TRIGGERS["leet"])
_DECODE = {view: re2.compile(pattern) for view, pattern in decode.TRIGGERS.items()}

_INVISIBLE = dict.fromkeys(INVISIBLE)
_LATIN = {k: v for k, v in normalize._LOOKALIKES.items() if len(v) == 1 and v.isalpha()}
_LOOKALIKES = str.maketrans(
    _LATIN | {k.upper(): v.upper() for k, v in _LATIN.items() if k.upper() != k}
)
# A Cyrillic or Greek letter that looks like no Latin one: the text has words in that script.
_FOLDED = {chr(code) for code in _LOOKALIKES}
_OWN_LETTER = re.compile(
    "["
    + "".join(c for c in map(chr, range(0x370, 0x530)) if c.isalpha() and c not in _FOLDED)
    + "]"
)
_WORD = re.compile(r"\S+")
_MIXED = re.compile(normalize.TRIGGERS["lookalike"])
# Python's `re` for the per-word pass: a plain character-class run cannot backtrack, and its
# matches cost a fraction of RE2's wrapper. A word is folded when a leet character comes
# before a letter: "1gn0r3", "pr3v10u5", "$ystem" (not "mp3").
_TOKEN = re.compile(r"[A-Za-z0-9@$]+")
_LEET_BEFORE_LETTER = re.compile(r"[013457@$][A-Za-z]")
_NUMBER_WITH_UNIT = re.compile(r"[0-9]+(?:s|am|pm|k|m|x|d|px|kb|mb|gb)")
_ORDINAL_SUFFIX = {"1": "st", "2": "nd", "3": "rd"}
_LEET = str.maketrans("013457@$", "oieastas")
_MIXED_CASE = re.compile(r"[a-z][^a-z]*[A-Z]")  # an upper-case letter after a lower-case one


def _is_number(word: str) -> bool:
    """10th, 3rd, 1990s, 5pm, 4k: numbers, not leetspeak ("4nd" is)."""
    if _NUMBER_WITH_UNIT.fullmatch(word):
        return True
    digits = word.rstrip("abcdefghijklmnopqrstuvwxyz")
    suffix = word[len(digits) :]
    if not digits.isdigit() or len(suffix) != 2:
        return False
    teen = len(digits) > 1 and digits[-2] == "1"
    return suffix == ("th" if teen else _ORDINAL_SUFFIX.get(digits[-1], "th"))


def _fold_leet(match: re.Match[str], *, written_in_leet: bool) -> str:
    word = match.group()
    if _is_number(word) or not any(c.isalpha() for c in word):
        return word
    if "@" in word and match.string[match.end() : match.end() + 1] == ".":
        return word  # an email address: name@example.com
    if not (_LEET_BEFORE_LETTER.search(word) or written_in_leet):
        return word
    if len(word) > MAX_LEET_WORD or _MIXED_CASE.search(word):
        return word  # an identifier or a code: in_0KVnBvo2ZNzxqg, aB3dE
    if sum(c.isupper() for c in word) > sum(c.islower() for c in word):
        return word.translate(_LEET).upper()
    return word.translate(_LEET)


def _decoded(text: str) -> str:
    views = {view for view, pattern in _DECODE.items() if pattern.search(text)}
    if not views:
        return text
    out, last = [], 0
    for segment in sorted(decode.decode_segments(text, views), key=lambda s: s.start):
        if segment.start < last:
            continue  # overlaps a segment already decoded (base64 that is also hex)
        out += [text[last : segment.start], segment.text]
        last = segment.end
    out.append(text[last:])
    return "".join(out)


_COMMON = """
    about after all also an and any are as at back be because but by can come could day do
    even first for from get give go good have he her him his how if in into is it its just
    know like look make me most my new no not now of on one only or other our out over people
    say see she so some take than that the their them then there these they think this time
    to two up us use want was way we well were what when which who will with work would year
    you your
"""
_COMMON_WORDS = frozenset(_COMMON.split())
_LETTER_RUNS = re.compile(r"[^\W\d_]+")
ROT13_SAMPLE_WORDS = 200
"""Words of a text looked at to tell whether it is English written in rot13."""


_MIXED_WORD = re.compile(r"[A-Za-z][0-9@$+]|[0-9@$+][A-Za-z]")
LANGUAGE_CHECK_WORDS = 4
"""A text of at least this many words, with fewer common words as written than once rotated
(or none either way), is asked of the language identifier when the counts do not decide."""


def _rot13_candidates(text: str) -> Iterator[str]:
    """The text's words that rot13 could have written, lower-cased: runs of letters of
    two or more (one proves nothing: "n" is "a" in rot13), all of them ASCII. A word with a
    lookalike or an accented letter in it ("Whаt" with a Cyrillic `а`, "café") is none:
    read in pieces, "Wh" and "t", its Latin letters rotated into common words by chance."""
    for match in _LETTER_RUNS.finditer(text):
        word = match.group()
        if len(word) >= 2 and word.isascii():
            yield word.lower()


def _is_rot13_english(text: str) -> bool:
    """Far more of its words are common English words once rotated than as written (with
    none as written, two different ones in a quarter of at least four words: "Jung vf
    dhnaghz pbzchgvat?"); or, where the common words do not decide ("Jung pnhfrf frnfbany
    nssrpgvir qvfbeqre?": one; "Jevgr n fubeg cbrz nobhg gur frn": none among its first
    words, a quarter too few), the language identifier reads it as English once rotated,
    and as written as another language or as English less surely.
    """
    if _MIXED_WORD.search(text):  # leetspeak ("y0ur c0nf1g"): its letters alone are no words
        return False
    words = list(islice(_rot13_candidates(text), ROT13_SAMPLE_WORDS))
    as_written = sum(w in _COMMON_WORDS for w in words)
    rotated = [w for w in words if codecs.encode(w, "rot13") in _COMMON_WORDS]
    # "NA" down a table's column rotates to "an": one word, however often, is nothing.
    enough = 2 if as_written == 0 and len(words) >= LANGUAGE_CHECK_WORDS else 3
    if len(set(rotated)) >= enough and len(rotated) >= max(0.25 * len(words), 3 * as_written):
        return True
    # No common word either way is no evidence for English as written: the identifier decides.
    written_wins = len(rotated) < as_written or (as_written > 0 and len(rotated) == as_written)
    if written_wins or len(words) < LANGUAGE_CHECK_WORDS:
        return False
    sample = " ".join(words)
    language, confidence = _language(codecs.encode(sample, "rot13"))
    if language != "en" or confidence < ROT13_CONFIDENCE:
        return False
    # Noise is English to the identifier too, just less surely ("Trarengr n arheny
    # argjbexf sbe phfgbzre freivpr": 0.13 as written, 0.46 rotated back).
    written, written_confidence = _language(sample)
    return written != "en" or written_confidence < confidence


ROT13_CONFIDENCE = 0.3
"""How sure py3langid must be that a rotated text is English. Portuguese read as rot13
rotates into something it calls English at 0.09; short benign prompts in rot13, rotated
back, are English at 0.19-1.0, many just under 0.5 ("Trarengr n zbovyr nccf sbe rkrepvfr
ebhgvarf": 0.49). At 0.3 no DEV text of any source, nor any of the 2,080 non-held-out
translated prompts in eight languages, is taken for rot13, as at 0.5 and 0.2."""


@functools.cache
def _identifier() -> Any:
    """py3langid's bundled model (loaded once, on the first text that needs it)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _language(text: str) -> tuple[str, float]:
    language, confidence = _identifier().classify(text)
    return str(language), float(confidence)


def _fold_lookalikes(text: str) -> str:
    """Every lookalike letter made Latin; only in the words mixing them with Latin letters
    when the text also has words in Cyrillic or Greek (step 3 of the module docstring)."""
    if not _OWN_LETTER.search(text):
        return text.translate(_LOOKALIKES)
    return _WORD.sub(
        lambda word: word[0].translate(_LOOKALIKES) if _MIXED.search(word[0]) else word[0],
        text,
    )


def as_read(text: str) -> str:
    """`readable(text)`, or `text` itself when there was nothing to undo: what the learned
    tiers embed, at training, in the corpus index and for every text they score."""
    return readable(text) or text


def readable(text: str) -> str | None:
    """`text` with its obfuscation undone, or None when there was none to undo (or the text
    is longer than `MAX_CHARS`)."""
    if len(text) > MAX_CHARS:
        return None
    folded = codecs.encode(text, "rot13") if _is_rot13_english(text) else text
    folded = _decoded(folded)  # before folding: leetspeak folding would garble base64
    if _UNICODE.search(folded):
        folded = unicodedata.normalize("NFKC", folded).translate(_INVISIBLE).translate(UNTAGGED)
    if _LOOKALIKE.search(folded):
        folded = _fold_lookalikes(folded)
    if _LEET_TRIGGER.search(folded):
        # In a text written in leetspeak, trailing digits are letters too ("bu7", "u5").
        leet = len(_LEET_BEFORE_LETTER.findall(folded)) >= WRITTEN_IN_LEET
        folded = _TOKEN.sub(functools.partial(_fold_leet, written_in_leet=leet), folded)
    return None if folded == text else folded
