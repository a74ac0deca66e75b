"""Build the judge's gRPC server. It is SERVING once bound, with or without an LLM: with
none configured every call answers UNAVAILABLE with a message naming
MITHRIL_JUDGE_BASE_URL (health reports the process, not the optional LLM behind it)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from mithril.judge.v1 import judge_service_pb2_grpc as pb_grpc
from mithril.runtime.server import ServiceServer, build_server
from mithril.services.judge.client import display_url
from mithril.services.judge.config import JudgeSettings
from mithril.services.judge.judge import Judge
from mithril.services.judge.servicer import SERVICE_NAME, JudgeServicer

_log = logging.getLogger(__name__)


@dataclass
class JudgeServer(ServiceServer):
    """A ServiceServer that also closes the judge's HTTP client when it stops."""

    judge: Judge | None = None

    async def stop(self, grace: float | None) -> None:
        await super().stop(grace)
        if self.judge is not None:
            await self.judge.aclose()


async def create_server(
    settings: JudgeSettings | None = None, judge: Judge | None = None
) -> JudgeServer:
    """A bound, unstarted server; unpacks as `(server, port)`. `judge` defaults to one
    built from `settings`."""
    settings = settings or JudgeSettings()
    judge = judge or Judge.from_settings(settings)
    servicer = JudgeServicer(judge)
    handle = await build_server(
        settings,
        [
            (
                SERVICE_NAME,
                lambda server: pb_grpc.add_JudgeServiceServicer_to_server(servicer, server),
            )
        ],
    )
    if judge.available:
        _log.info(
            "judge LLM configured",
            extra={"endpoint": display_url(settings.base_url), "model": judge.model},
        )
    else:
        _log.warning(
            "judge has no LLM; every call answers UNAVAILABLE: %s", judge.unavailable_reason
        )
    wrapped = JudgeServer(
        server=handle.server,
        port=handle.port,
        health=handle.health,
        service_names=handle.service_names,
        judge=judge,
    )
    await wrapped.mark_serving()  # nothing to load: ready
    return wrapped
