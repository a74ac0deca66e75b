"""Tenants, gateway API keys and the per-tenant, per-route policy file.

`PolicyBook.load(path)` validates a YAML policy file (every problem reported at once) and
answers two questions per request: who is calling (`authenticate`) and what applies to
them on this route (`resolve`). The schema is in `model.py`; an annotated example with
every option is `example-policy.yaml` next to this file.
"""

from pathlib import Path

from mithril.gateway.policy.book import (
    DEFAULT_TENANT,
    PolicyBook,
    PolicyError,
    Tenant,
    bearer_token,
    hash_key,
    new_key,
)
from mithril.gateway.policy.model import (
    DETECTORS,
    ROUTES,
    OutputPolicy,
    PolicyFile,
    PolicyLayer,
    RoutePolicy,
    TenantConfig,
    UpstreamPolicy,
    detector_available,
)

EXAMPLE_POLICY = str(Path(__file__).with_name("example-policy.yaml"))
"""Path of the annotated example policy shipped with the package."""

__all__ = [
    "DEFAULT_TENANT",
    "DETECTORS",
    "EXAMPLE_POLICY",
    "ROUTES",
    "OutputPolicy",
    "PolicyBook",
    "PolicyError",
    "PolicyFile",
    "PolicyLayer",
    "RoutePolicy",
    "Tenant",
    "TenantConfig",
    "UpstreamPolicy",
    "bearer_token",
    "detector_available",
    "hash_key",
    "new_key",
]
