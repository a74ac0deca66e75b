"""The memory gate: what agents may write into shared memory."""
