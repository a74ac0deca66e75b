"""Everything the gateway's routes share, built once at start-up and closed at shutdown."""

from __future__ import annotations

import logging
import os
import secrets
from dataclasses import dataclass

from mithril.gateway.cascade import LearnedTiers
from mithril.gateway.config import GatewaySettings
from mithril.gateway.decision import Mode, Policy
from mithril.gateway.detectors import Detectors
from mithril.gateway.events.store import EventStore, default_database_url
from mithril.gateway.events.writer import EventLog
from mithril.gateway.firewall import Firewall
from mithril.gateway.local_embeddings import LocalEmbeddings
from mithril.gateway.memory_api import MemoryServices
from mithril.gateway.openai.upstream import Upstream
from mithril.gateway.policy.book import PolicyBook, Tenant
from mithril.runtime.settings import ADMIN_TOKEN_FILE, mithril_home

_log = logging.getLogger(__name__)


@dataclass
class Components:
    settings: GatewaySettings
    firewall: Firewall
    policy_book: PolicyBook
    upstream: Upstream
    event_store: EventStore
    event_log: EventLog
    admin_token: str
    memory: MemoryServices | None = None
    """The memory gate and reputation service behind /v1/memory (None: not served)."""
    local_embeddings: LocalEmbeddings | None = None
    """The embedding service behind /v1/embeddings for local model names (None: none)."""

    async def start(self) -> None:
        await self.event_log.start()

    async def close(self) -> None:
        if self.memory is not None:
            await self.memory.close()
        if self.local_embeddings is not None:
            await self.local_embeddings.close()
        await self.event_log.close()
        await self.upstream.close()
        await self.firewall.close()
        self.event_store.close()


def load_policy_book(settings: GatewaySettings) -> PolicyBook:
    """The policy file, or the embedded default built from the settings."""
    if settings.policy_file is not None:
        return PolicyBook.load(settings.policy_file)
    return PolicyBook.open_default(
        mode=settings.mode,
        threshold=settings.threshold,
        upstream={"url": settings.upstream_url},
        max_input_chars=settings.max_text_chars,
    )


@dataclass(frozen=True, slots=True)
class ServicePolicies:
    """The policies of FirewallService and CLI callers, by the way the text travels."""

    input: Policy
    output: Policy


def service_policies(book: PolicyBook, settings: GatewaySettings) -> ServicePolicies:
    """Tenant `default`'s /v1/scan policies when the book has that tenant, else the
    settings' mode and threshold (credentials and personal data redacted either way)."""
    try:
        route = book.resolve(Tenant("default"), "/v1/scan")
    except KeyError:
        fallback = Policy(Mode(settings.mode), settings.threshold)
        return ServicePolicies(fallback, fallback)
    return ServicePolicies(route.decision_policy, route.scan_output_policy)


def admin_token(settings: GatewaySettings, book: PolicyBook) -> str:
    """Settings, else the policy file, else a token generated once under MITHRIL_HOME."""
    if settings.admin_token:
        return settings.admin_token
    if book.admin_token:
        return book.admin_token
    path = mithril_home() / ADMIN_TOKEN_FILE
    if path.exists():
        return path.read_text().strip()
    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(token + "\n")
    _log.info("generated an admin token", extra={"admin_token_file": str(path)})
    return token


def build_components(
    settings: GatewaySettings, detectors: Detectors, tiers: LearnedTiers | None = None
) -> Components:
    book = load_policy_book(settings)
    policies = service_policies(book, settings)
    store = EventStore(settings.database_url or default_database_url())
    return Components(
        settings=settings,
        firewall=Firewall(detectors, policies.input, tiers, output_policy=policies.output),
        policy_book=book,
        upstream=Upstream(),
        event_store=store,
        event_log=EventLog(
            store,
            max_queue=settings.event_queue_size,
            batch_size=settings.event_batch_size,
            flush_interval=settings.event_flush_seconds,
        ),
        admin_token=admin_token(settings, book),
        memory=MemoryServices.from_settings(settings),
        local_embeddings=(
            LocalEmbeddings(
                settings.local_embedding_models,
                settings.embedding_addr,
                settings.service_token,
                settings.service_timeout_seconds,
            )
            if settings.local_embedding_models
            else None
        ),
    )
