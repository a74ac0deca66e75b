# ruff: noqa: RUF001  (lookalike characters are part of the adversarial inputs)
"""Quick scan-time measurement: benign and adversarial inputs against a bare RE2 set.

Not a test (timings on shared machines are noise for asserts); run it by hand:

    .venv/bin/python tests/unit/scanner/measure_latency.py [--size BYTES]

Prints, for benign text at the benchmark sizes and for adversarial inputs of `--size` bytes
(1 MB by default), the median time of `Scanner.scan` and of one `re2.Set.Match` over all rule
patterns (the baseline `mithril bench latency` uses), both warm (the same text scanned again)
and, for the scanner, on a first encounter (a different text of the same kind).
`adversarial_inputs` is also used by the engine tests, at small sizes, to check windowed
matching against whole-text search.
"""

from __future__ import annotations

import argparse
import base64
import random
import statistics
import string
import time
from collections.abc import Callable, Iterator

_ATTACK_WORDS = (
    "ignore you all previous the instructions rules system prompt reveal your no restrictions "
    "mode developer always answer never do not tell user anything now start response follow "
    "with sure act as from on are an ai dan jailbreak above repeat print text before forget "
    "disregard override bypass safety filters guidelines hidden secret"
)
_LEET_WORDS = "1gn0r3 pr3v10u5 1n5truct10n5 r3v34l 5y5t3m pr0mpt y0u 4ll th3 ru135"
ATTACK_WORDS = _ATTACK_WORDS.split()
LEET_WORDS = _LEET_WORDS.split()
LOOKALIKE_WORDS = ["pаsswоrd", "ignоre", "rеveal", "systеm", "prеvious", "the", "you"]


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _words(rng: random.Random, vocabulary: list[str], size: int) -> str:
    out: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(vocabulary)
        out.append(word)
        length += len(word) + 1
    return " ".join(out)[:size]


def adversarial_inputs(size: int, seed: int = 3) -> Iterator[tuple[str, str]]:
    """(label, text) pairs built to stress the scanner: dense anchors, triggers, odd text."""
    rng = random.Random(seed)
    yield "trigger words, repeated", _fill("ignore you all previous the ", size)
    yield "attack words, random order", _words(rng, ATTACK_WORDS, size)
    yield (
        "single letters a b c",
        " ".join(rng.choice(string.ascii_lowercase) for _ in range(size))[:size],
    )
    chunks = []
    while sum(map(len, chunks)) < size:
        raw = bytes(rng.randrange(256) for _ in range(rng.randint(15, 300)))
        chunks.append(base64.b64encode(raw).decode())
    yield "base64-ish runs", " ".join(chunks)[:size]
    yield "leetspeak words", _words(rng, LEET_WORDS + ATTACK_WORDS, size)
    yield (
        "%XX runs",
        "".join(rng.choice(["%41", "%42", "%2F", "%20", "x", " "]) for _ in range(size))[:size],
    )
    yield "hex runs", _fill("0x41 0x42 0x43 0x44 0x45 0x46 ", size)
    yield "punctuation soup", "".join(rng.choice("!?.*#@~^ _-|/,<>[]{}") for _ in range(size))
    yield "one letter", "a" * size
    yield "chat turns", _fill("user: hi\nassistant: hello\n", size)
    yield "open html comment", "<!--" + _fill("x ", size - 4)
    yield "zero-width inside words", _fill("a\u200bb\u200bc\u200bd ", size)
    yield "lookalike letters", _words(rng, LOOKALIKE_WORDS, size)


def _median_ms(call: Callable[[], object], budget: float = 0.3, repeat: int = 5) -> float:
    started = time.perf_counter()
    call()
    once = max(time.perf_counter() - started, 1e-7)
    loops = max(1, int(budget / once))
    repeat = repeat if once < 0.5 else 2
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(loops):
            call()
        samples.append((time.perf_counter() - started) / loops)
    return statistics.median(samples) * 1e3


def main() -> None:
    from mithril.benchmark.latency import SIZES, _bare_set, benign_text
    from mithril.services.scanner import Scanner

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 20, help="adversarial input size")
    args = parser.parse_args()
    scanner = Scanner.from_rule_files()
    bare = _bare_set([p for rule in scanner.rules for p in rule.compiled_patterns()])
    print(f"{'input':<34}{'bare set ms':>12}{'scan ms':>10}{'ratio':>7}{'first scan ms':>15}")
    rows = [
        (f"benign {label}", benign_text(size), benign_text(size, seed=8))
        for label, size in SIZES.items()
    ]
    rows += [
        (f"adversarial {label}", text, other)
        for (label, text), (_, other) in zip(
            adversarial_inputs(args.size), adversarial_inputs(args.size, seed=4), strict=True
        )
    ]
    for label, text, other in rows:
        started = time.perf_counter()
        scanner.scan(other)  # a text of the same kind never seen before
        first = (time.perf_counter() - started) * 1e3
        baseline = _median_ms(lambda t=text: bare.Match(t))
        scan = _median_ms(lambda t=text: scanner.scan(t))
        print(f"{label:<34}{baseline:12.3f}{scan:10.3f}{scan / baseline:7.2f}{first:15.1f}")


if __name__ == "__main__":
    main()
