"""Client channels between Mithril's components: one way to open them, one way to
authenticate, so every caller (gateway, memory gate, CLI) reconnects and traces alike."""

from __future__ import annotations

from collections.abc import Callable

import grpc

from mithril.runtime.tracing import ClientTracingInterceptor

CallObserver = Callable[[str, str, float], None]
"""Called with (service full name, method, seconds) after every unary call."""


def bearer_metadata(token: str) -> tuple[tuple[str, str], ...]:
    """The call metadata carrying the shared service token, if one is configured."""
    return (("authorization", f"Bearer {token}"),) if token else ()


def open_channel(target: str, observe: CallObserver | None = None) -> grpc.aio.Channel:
    """An insecure channel with tracing and round-robin over every resolved address."""
    return grpc.aio.insecure_channel(
        target,
        options=[
            ("grpc.lb_policy_name", "round_robin"),
            ("grpc.max_receive_message_length", 64 * 1024 * 1024),
            ("grpc.max_send_message_length", 64 * 1024 * 1024),
            ("grpc.enable_retries", 1),
            # A restarted service is found again within a second, not after grpc's default
            # exponential backoff (up to two minutes), during which every call fails fast.
            ("grpc.initial_reconnect_backoff_ms", 100),
            ("grpc.min_reconnect_backoff_ms", 100),
            ("grpc.max_reconnect_backoff_ms", 1000),
        ],
        interceptors=[ClientTracingInterceptor(observe=observe)],
    )
