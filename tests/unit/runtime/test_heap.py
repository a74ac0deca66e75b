"""`settle_heap`: the start-up heap is frozen, young collections are rarer, and cycles made
afterwards are still collected."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import gc, weakref
from mithril.runtime.heap import YOUNG_THRESHOLD, settle_heap

kept = [object() for _ in range(1000)]
settle_heap()
assert gc.get_freeze_count() >= 1000, gc.get_freeze_count()
assert gc.get_threshold()[0] == YOUNG_THRESHOLD > 700

class Node:
    pass

a, b = Node(), Node()
a.other, b.other = b, a
probe = weakref.ref(a)
del a, b
assert probe() is not None  # a cycle: reference counting alone cannot free it
gc.collect()
assert probe() is None
print("ok")
"""


def test_settle_heap_freezes_start_up_and_still_collects_cycles() -> None:
    # In a child process: the collector's settings are global to the interpreter.
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
