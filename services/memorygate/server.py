"""Build the memory gate's gRPC server: open the channels to the services it calls, start
verified memory (Cognee; the first start in a process takes seconds), finish any write a
crash interrupted, then report SERVING."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

import grpc

from mithril.memorygate.v1 import memorygate_service_pb2_grpc as pb_grpc
from mithril.runtime.channels import bearer_metadata, open_channel
from mithril.runtime.server import ServiceServer, build_server
from mithril.services.memorygate.cognee_store import CogneeStore, LLMConfig
from mithril.services.memorygate.config import MemoryGateSettings
from mithril.services.memorygate.gate import MemoryGate, VerifiedStore
from mithril.services.memorygate.ledger import Ledger
from mithril.services.memorygate.servicer import SERVICE_NAME, MemoryGateServicer
from mithril.services.memorygate.steps.content_danger import ContentDanger
from mithril.services.memorygate.steps.credentials import CredentialGuard
from mithril.services.memorygate.steps.memory_check import ConsistencyCheck
from mithril.services.memorygate.steps.reputation import ServiceReputation
from mithril.services.memorygate.steps.second_opinion import SecondOpinion
from mithril.services.memorygate.trust import TrustModel
from mithril.services.reputation.client import ReputationClient

_log = logging.getLogger(__name__)
RECOVERY_INTERVAL_SECONDS = 60.0


@dataclass
class MemoryGateServer(ServiceServer):
    """A ServiceServer that also closes its channels, its database and verified memory."""

    gate: MemoryGate | None = None
    channels: list[grpc.aio.Channel] = field(default_factory=list)
    owns_store: bool = True
    recovery: asyncio.Task[None] | None = None

    async def stop(self, grace: float | None) -> None:
        if self.recovery is not None:
            self.recovery.cancel()
        await super().stop(grace)
        for channel in self.channels:
            await channel.close()
        if self.gate is not None:
            self.gate.ledger.close()
            close = getattr(self.gate.store, "close", None)
            if self.owns_store and close is not None:
                await close()


async def _keep_finishing_pending_writes(gate: MemoryGate, grace_seconds: float) -> None:
    """A write interrupted while this process runs (its Cognee call hung, say) is finished
    once it is older than the grace period, not only at the next start."""
    while True:
        await asyncio.sleep(RECOVERY_INTERVAL_SECONDS)
        try:
            await gate.finish_pending_writes(grace_seconds)
        except Exception:
            _log.exception("finishing pending memory writes failed; retrying later")


def build_store(settings: MemoryGateSettings) -> CogneeStore:
    llm = None
    if settings.llm_base_url:
        llm = LLMConfig(
            base_url=settings.llm_base_url,
            model=settings.llm_model,
            api_key=settings.llm_api_key.get_secret_value(),
        )
    return CogneeStore(settings.resolved_memory_root, llm=llm)


async def create_server(
    settings: MemoryGateSettings | None = None, store: VerifiedStore | None = None
) -> MemoryGateServer:
    """A bound, unstarted, SERVING server; unpacks as `(server, port)`. Pass a started
    `store` to share one verified memory (tests do: Cognee's first start is slow)."""
    settings = settings or MemoryGateSettings()
    metadata = bearer_metadata(settings.service_token.get_secret_value())
    secrets, scanner, reputation = (
        open_channel(settings.secrets_addr),
        open_channel(settings.scanner_addr),
        open_channel(settings.reputation_addr),
    )
    judge_channel = open_channel(settings.judge_addr) if settings.judge_addr else None
    channels = [c for c in (secrets, scanner, reputation, judge_channel) if c is not None]
    judge = SecondOpinion(judge_channel, metadata, settings.judge_timeout_seconds)
    owns_store = store is None
    if store is None:
        cognee = build_store(settings)
        await cognee.start()
        store = cognee
    gate = MemoryGate(
        guard=CredentialGuard(
            secrets, metadata, settings.keep_kinds, settings.call_timeout_seconds
        ),
        reputation=ServiceReputation(
            ReputationClient(
                reputation,
                token=settings.service_token.get_secret_value(),
                timeout=settings.call_timeout_seconds,
            )
        ),
        consistency=ConsistencyCheck(
            store,
            judge,
            top_k=settings.context_top_k,
            min_similarity=settings.context_min_similarity,
            flag_at=settings.contradiction_flag,
        ),
        danger=ContentDanger(
            scanner,
            metadata,
            settings.call_timeout_seconds,
            judge,
            internal_domains=settings.internal_domains,
        ),
        store=store,
        ledger=Ledger(settings.resolved_database_url),
        model=TrustModel.from_settings(settings),
        contradiction_flag=settings.contradiction_flag,
    )
    await gate.finish_pending_writes(settings.pending_grace_seconds)
    servicer = MemoryGateServicer(gate, settings.recall_top_k)
    handle = await build_server(
        settings,
        [
            (
                SERVICE_NAME,
                lambda server: pb_grpc.add_MemoryGateServiceServicer_to_server(servicer, server),
            )
        ],
    )
    wrapped = MemoryGateServer(
        server=handle.server,
        port=handle.port,
        health=handle.health,
        service_names=handle.service_names,
        gate=gate,
        channels=channels,
        owns_store=owns_store,
    )
    wrapped.recovery = asyncio.create_task(
        _keep_finishing_pending_writes(gate, settings.pending_grace_seconds)
    )
    await wrapped.mark_serving()
    _log.info("memory gate ready", extra={"memory_root": str(settings.resolved_memory_root)})
    return wrapped
