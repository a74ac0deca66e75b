"""One OpenTelemetry setup for every process, configured by the standard OTEL_* variables.

The SDK tracer provider is installed only when spans go somewhere: an OTLP endpoint
(OTEL_EXPORTER_OTLP_ENDPOINT or the traces-specific variable) or a processor passed in
(tests). Otherwise the API's no-op tracer costs next to nothing per call, and the trace
context a caller sends still flows through to the services it calls and into log lines.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Iterator
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import OTELResourceDetector, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanProcessor

_lock = threading.Lock()
_provider: TracerProvider | None = None


def setup_telemetry(service_name: str, extra_processor: SpanProcessor | None = None) -> None:
    """Install the process's tracer provider once; later calls only add `extra_processor`."""
    global _provider
    with _lock:
        if _provider is None and (extra_processor is not None or _otlp_endpoint_configured()):
            resource = Resource.create(
                {"service.name": os.environ.get("OTEL_SERVICE_NAME", f"mithril-{service_name}")}
            ).merge(OTELResourceDetector().detect())
            _provider = TracerProvider(resource=resource)
            if _otlp_endpoint_configured():
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                    OTLPSpanExporter,
                )

                _provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
            trace.set_tracer_provider(_provider)
        if extra_processor is not None and _provider is not None:
            _provider.add_span_processor(extra_processor)


def shutdown_telemetry() -> None:
    """Flush pending spans; called on process exit."""
    if _provider is not None:
        _provider.shutdown()


def tracer(name: str) -> trace.Tracer:
    return trace.get_tracer(name)


def recording() -> bool:
    """Whether spans go anywhere; when not, hot paths skip creating them altogether."""
    return _provider is not None


class _NoSpan:
    """What `span()` returns when nothing records and no parent is given: entering and
    leaving it does nothing, and it is one shared object, so a hot path pays two calls."""

    __slots__ = ()

    def __enter__(self) -> trace.Span:
        return trace.INVALID_SPAN

    def __exit__(self, *_: object) -> None:
        return None


_NO_SPAN = _NoSpan()


@contextlib.contextmanager
def _attached(parent: Context) -> Iterator[trace.Span]:
    token = otel_context.attach(parent)
    try:
        yield trace.INVALID_SPAN
    finally:
        otel_context.detach(token)


def span(
    tracer_: trace.Tracer,
    name: str,
    parent: Context | None = None,
    **kwargs: Any,
) -> contextlib.AbstractContextManager[trace.Span]:
    """`tracer_.start_as_current_span(...)` when tracing records; otherwise only `parent`
    (an extracted remote context) is made current, so it still flows to the calls and
    log lines below, at a fraction of the cost of a no-op span."""
    if _provider is not None:
        return tracer_.start_as_current_span(name, context=parent, **kwargs)
    if parent is None:
        return _NO_SPAN
    return _attached(parent)


def text_fingerprint(text: str) -> str:
    """A short hash that lets spans and events correlate a text without holding it."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _otlp_endpoint_configured() -> bool:
    if os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "none":
        return False
    return bool(
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    )
