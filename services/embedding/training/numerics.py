"""CPU numerics pinned for fitting with torch, so that a seed gives the same factors on any
x86-64 host and with any number of threads.

Without it the fine-tuned factors follow the host. Fitting the multilingual adapter on 192
pieces (thirty-ninth session, one AMD EPYC host with AVX-512), the factors' bytes changed
with each of: the number of threads (1 or 2), ATen's vector kernels (AVX-512, AVX2 or
none), MKL's code path, and the instruction set oneDNN may use. So the full fine-tune, run
on another host, gave factors 0.03-0.12 away from the shipped ones, from the same rows.

Pinned here: MKL's conditional numerical reproducibility on its compatible path (the one
MKL documents as giving the same results on every Intel or compatible processor), ATen's
kernels without vector instructions, and oneDNN off (torch then multiplies with MKL).
Under them the factors came out byte-identical with one thread or two and with oneDNN
capped at SSE4.1 or not. Fitting takes 1.6-1.7 times as long. Nothing at run time is
affected: the service reads the factors with ONNX Runtime.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

PINNED = {"MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "default"}
"""Read by MKL and ATen once, when torch first runs: they must be set before it is imported."""
DESCRIPTION = (
    f"torch on the CPU with {', '.join(f'{k}={v}' for k, v in PINNED.items())} and oneDNN off"
    " (training/numerics.py): the same factors on any x86-64 host and thread count"
)


def pin() -> None:
    """Set the environment MKL and ATen read; refused once torch is imported without it."""
    unpinned = {k: v for k, v in PINNED.items() if os.environ.get(k) != v}
    if unpinned and "torch" in sys.modules:
        raise RuntimeError(
            "torch was imported before its numerics were pinned; set "
            + " ".join(f"{k}={v}" for k, v in unpinned.items())
            + " or call numerics.pin() first"
        )
    os.environ.update(PINNED)


@contextmanager
def pinned() -> Iterator[None]:
    """torch with the pinned numerics, for the length of a fit."""
    pin()
    import torch

    capability = torch.backends.cpu.get_cpu_capability()
    if capability != "DEFAULT":
        raise RuntimeError(f"ATen chose its {capability} kernels before the numerics were pinned")
    # Not `mkldnn.flags()`: it also sets TF32, which warns on every CPU.
    onednn = torch.backends.mkldnn.set_flags(False)[0]
    try:
        yield
    finally:
        torch.backends.mkldnn.set_flags(onednn)
