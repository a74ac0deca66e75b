"""time_ordered_id: UUIDv7, unguessable, and in creation order across milliseconds."""

from __future__ import annotations

import time
import uuid

from mithril.gateway.decision import Mode, Policy, decide
from mithril.runtime.ids import time_ordered_id


def test_ids_are_uuid7_hex() -> None:
    value = time_ordered_id()
    parsed = uuid.UUID(hex=value)
    assert len(value) == 32 and value == parsed.hex
    assert parsed.version == 7 and parsed.variant == uuid.RFC_4122
    milliseconds = int(value[:12], 16)
    assert abs(milliseconds - time.time() * 1000) < 5_000


def test_ids_sort_in_creation_order_across_milliseconds() -> None:
    earlier = [time_ordered_id() for _ in range(50)]
    time.sleep(0.003)
    later = [time_ordered_id() for _ in range(50)]
    assert max(earlier) < min(later)


def test_ids_do_not_repeat_within_a_millisecond() -> None:
    assert len({time_ordered_id() for _ in range(20_000)}) == 20_000


def test_decisions_carry_time_ordered_ids() -> None:
    decision = decide([], Policy(Mode.BLOCK, 0.5))
    assert uuid.UUID(hex=decision.decision_id).version == 7
