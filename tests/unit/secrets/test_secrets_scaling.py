"""Number-heavy and adversarial text: the gated digit scan is exact, and cost stays linear."""

from __future__ import annotations

import random
import string
import time

import pytest

from mithril.services.secrets import SecretsDetector
from mithril.services.secrets.detectors import REGISTRY
from mithril.services.secrets.detectors._digits import scan_gated
from mithril.services.secrets.textview import TextView

DETECTOR = SecretsDetector.default()
GATED = tuple(REGISTRY[kind] for kind in ("phone", "ssn", "credit_card"))
_WORDS = (
    "phone", "Tel:", "call", "number", "no.", "#", "ssn", "SSN", "social security", "ss#",
    "card", "visa", "amex", "cc", "ext", "x", "hotel", "during", "\u017fms", "mob\u0131le",
    "é", "日本", "date", "price", "(", ")", "+", "-", ".", "/", ":", ",", "_", "a", " ", " ", "\n",
)  # fmt: skip


def _number(rng: random.Random) -> str:
    shapes = (
        lambda: "".join(rng.choice(string.digits) for _ in range(rng.randint(1, 20))),
        lambda: rng.choice(" -.").join(str(rng.randint(0, 99999)) for _ in range(4)),
        lambda: f"({rng.randint(0, 999)}) {rng.randint(0, 999)}-{rng.randint(0, 9999)}",
        lambda: f"+{rng.randint(1, 99)} {rng.randint(0, 9999)} {rng.randint(0, 999999)}",
        lambda: f"0{rng.randint(0, 9999)} {rng.randint(0, 9999)} {rng.randint(0, 9999)}",
        lambda: f"{rng.randint(0, 999):03d}-{rng.randint(0, 99):02d}-{rng.randint(0, 9999):04d}",
        lambda: f"{rng.randint(100, 999)}.{rng.randint(100, 999)}.{rng.randint(0, 9999)} x12",
        lambda: f"{rng.randint(2000, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        lambda: "4111 1111 1111 1111",
    )
    return rng.choice(shapes)()


def _text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 30)):
        parts.append(_number(rng) if rng.random() < 0.5 else rng.choice(_WORDS))
        parts.append(rng.choice(("", " ", ": ", " is ", "\n")))
    return "".join(parts)


def test_gated_scan_equals_unrestricted_scan() -> None:
    rng = random.Random(2024)
    accepted = 0
    for _ in range(3000):
        text = _text(rng)
        view = TextView(text)
        pos = rng.choice((0, 0, rng.randint(0, len(text))))
        expected = [list(detector.find_in(view, pos)) for detector in GATED]
        assert scan_gated(view, GATED, pos) == expected, (text, pos)
        accepted += sum(map(len, expected))
    assert accepted > 1000  # the texts exercise acceptance, not only rejection


def test_dates_and_prices_never_reach_validation() -> None:
    text = "Shipped on 2023-01-15 10:30, invoice 15.01.2023 for $1,234.56 (v1.2.3). " * 50
    view = TextView(text)
    assert scan_gated(view, GATED, 0) == [[], [], []]


def _adversarial(size: int) -> dict[str, str]:
    rng = random.Random(5)
    b64 = string.ascii_letters + string.digits + "+/"
    return {
        "digits": " ".join(str(rng.randint(0, 99999)) for _ in range(size // 4))[:size],
        "password=": ("password=" * size)[:size],
        "base64": "".join(rng.choice(b64) for _ in range(size)),
        "pem-no-end": ("-----BEGIN PRIVATE KEY-----" * size)[:size],
        "numbers": " ".join(_number(rng) for _ in range(size // 10))[:size],
    }


@pytest.mark.parametrize("kind", sorted(_adversarial(10)))
def test_detect_cost_is_linear(kind: str) -> None:
    small, large = _adversarial(25_000)[kind], _adversarial(200_000)[kind]

    def best(text: str) -> float:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            DETECTOR.detect(text)
            times.append(time.perf_counter() - started)
        return min(times)

    # 8x the text: linear is ~8x; allow noise, but quadratic (~64x) must fail.
    assert best(large) < 24 * best(small) + 0.05
