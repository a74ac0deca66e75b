"""The decision pipeline the CLI runs: in-process by default, or a running gateway."""

from __future__ import annotations

from typing import Any, Protocol

import httpx

from mithril.domain import Origin
from mithril.gateway.components import load_policy_book, service_policies
from mithril.gateway.config import GatewaySettings
from mithril.gateway.detectors import LocalDetectors
from mithril.gateway.firewall import Firewall, MessageInput
from mithril.gateway.tiers import local_tiers
from mithril.runtime.convert import finding_to_dict


class CliError(Exception):
    """A problem to report in one line, without a traceback."""


class Pipeline(Protocol):
    async def scan(self, text: str, origin: str) -> dict[str, Any]: ...

    async def redact(self, text: str) -> dict[str, Any]: ...

    async def close(self) -> None: ...


class LocalPipeline:
    """The gateway's policy over the detection libraries, in this process."""

    def __init__(self, settings: GatewaySettings | None = None) -> None:
        settings = settings or GatewaySettings()
        policies = service_policies(load_policy_book(settings), settings)
        wanted = set(settings.learned_tiers) & policies.input.detectors
        # The full cascade, in-process: the learned tiers load the model (and, the first
        # time, embed the attack corpus); the judge joins when an LLM is configured.
        tiers = (
            local_tiers(settings.document_classifier_threshold, settings.document_attack_encoder)
            if wanted
            else None
        )
        self.firewall = Firewall(
            LocalDetectors(), policies.input, tiers, output_policy=policies.output
        )
        self.max_text_chars = settings.max_text_chars

    def _check(self, text: str) -> None:
        if not text.strip():
            raise ValueError("text must not be empty")
        if len(text) > self.max_text_chars:
            raise ValueError(f"text has {len(text)} characters; the limit is {self.max_text_chars}")

    async def scan(self, text: str, origin: str) -> dict[str, Any]:
        """The decision as /v1/scan gives it, `redacted_text` included when it redacts."""
        self._check(text)
        result = await self.firewall.scan_messages([MessageInput(Origin[origin.upper()], text)])
        return result.scan_answer(text)

    async def redact(self, text: str) -> dict[str, Any]:
        self._check(text)
        redaction = await self.firewall.redact(text)
        return {
            "text": redaction.text,
            "findings": [finding_to_dict(f) for f in redaction.findings],
        }

    async def close(self) -> None:
        return None


class RemotePipeline:
    """A running gateway's /v1/scan and /v1/redact."""

    def __init__(self, base_url: str, timeout: float = 30.0) -> None:
        self.client = httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=timeout)

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            response = await self.client.post(path, json=body)
        except httpx.HTTPError as exc:
            raise CliError(f"cannot reach the gateway at {self.client.base_url}: {exc}") from exc
        payload = response.json()
        if response.status_code != 200:
            message = payload.get("error", {}).get("message", response.text)
            if response.status_code in (400, 413):
                raise ValueError(message)
            raise CliError(f"gateway answered {response.status_code}: {message}")
        return payload  # type: ignore[no-any-return]

    async def scan(self, text: str, origin: str) -> dict[str, Any]:
        return await self._post("/v1/scan", {"text": text, "origin": origin})

    async def redact(self, text: str) -> dict[str, Any]:
        return await self._post("/v1/redact", {"text": text})

    async def close(self) -> None:
        await self.client.aclose()


def open_pipeline(remote: str | None) -> Pipeline:
    return RemotePipeline(remote) if remote else LocalPipeline()
