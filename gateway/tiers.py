"""The learned tiers and the judge, in-process or over gRPC (see `cascade.py`).

Both implementations answer the same two calls, so the cascade does not depend on where
the models run: `mithril scan` runs them in-process, the gateway calls the services.
A judge that cannot answer (no LLM configured, unreachable, a useless reply) is skipped,
never failed closed: it is a second opinion on the ambiguous band.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import struct
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Protocol

import grpc

from mithril.domain import Finding, Origin, Severity
from mithril.embedding.v1 import embedding_service_pb2, embedding_service_pb2_grpc
from mithril.gateway.batching import MicroBatcher
from mithril.gateway.config import GatewaySettings
from mithril.gateway.detectors import (
    Analysis,
    ServiceUnavailableError,
    canonical,
    learned_severity,
    open_channel,
)
from mithril.gateway.document_scale import OFF, rescaled
from mithril.judge.v1 import judge_service_pb2, judge_service_pb2_grpc
from mithril.runtime.channels import bearer_metadata
from mithril.services.embedding.planted import document_runs
from mithril.services.scanner.readable import as_read
from mithril.services.scanner.tables import prose_among_rows

if TYPE_CHECKING:
    from mithril.services.embedding.tiers import EmbeddingTiers

_log = logging.getLogger(__name__)

JUDGE = "judge"
_VERDICT_NAMES = {
    judge_service_pb2.VERDICT_ATTACK: "attack",
    judge_service_pb2.VERDICT_BENIGN: "benign",
    judge_service_pb2.VERDICT_UNCERTAIN: "uncertain",
}


def judge_finding(verdict: str, score: float, model: str) -> Finding:
    """The judge's opinion as a finding; never its rationale, which may quote the text."""
    return Finding(
        rule_id=f"judge.{verdict}",
        detector=JUDGE,
        category=JUDGE,
        severity=Severity.HIGH if verdict == "attack" else Severity.LOW,
        confidence=round(min(max(score, 0.0), 1.0), 6),
        message=f"the judge ({model or 'LLM'}) considers it {verdict}",
    )


LEARNED_CATEGORY = "learned"
"""Similarity and classifier findings share one category: one opinion, not two."""
MIN_REPORTED = 0.1
"""Learned scores below this are not reported as findings (they would not move a score)."""


def similarity_finding(score: float, max_similarity: float, nearest: str) -> Finding:
    return Finding(
        rule_id="embedding.similarity",
        detector="embedding",
        category=LEARNED_CATEGORY,
        severity=learned_severity(score),
        confidence=round(score, 6),
        message=f"close to known attacks ({nearest or 'attack'}; cosine {max_similarity:.2f})",
    )


def classifier_finding(probability: float, language: str = "") -> Finding:
    """`language`: the language the multilingual model read the text as, '' when the English
    classifier's probability stands ("en": the multilingual model's second opinion on a
    short English text)."""
    if language == "en":
        reader = "the multilingual attack classifier (a second opinion on English)"
    elif language:
        reader = f"the multilingual attack classifier ({language})"
    else:
        reader = "the attack classifier"
    return Finding(
        rule_id="embedding.classifier",
        detector="classifier",
        category=LEARNED_CATEGORY,
        severity=learned_severity(probability),
        confidence=round(probability, 6),
        message=f"{reader} gives {probability:.2f}",
    )


def learned_findings(
    which: Collection[str],
    similarity: float,
    max_similarity: float,
    nearest: str,
    probability: float,
    language: str = "",
    near_copy: float | None = None,
) -> tuple[Finding, ...]:
    """The learned tiers' findings. With the classifier asked too, the similarity's is its
    `near_copy` score (when given): the classifier's probability already reads the
    similarity (services/embedding/combiner.py), and counting it again would flag what the
    two together do not."""
    found = []
    if "classifier" in which and near_copy is not None:
        similarity = near_copy
    if "embedding" in which and similarity >= MIN_REPORTED:
        found.append(similarity_finding(similarity, max_similarity, nearest))
    if "classifier" in which and probability >= MIN_REPORTED:
        found.append(classifier_finding(probability, language))
    # Scores as they survive a protobuf float: in-process and remote decisions agree.
    return tuple(canonical(f) for f in found)


PLANTED_LINE_RULE = "embedding.planted_line"
"""The planted-line head's finding (made by the classifier tier, on documents only)."""


def planted_line_finding(probability: float, request: float, relatedness: float) -> Finding:
    return canonical(
        Finding(
            rule_id=PLANTED_LINE_RULE,
            detector="classifier",
            category=LEARNED_CATEGORY,
            severity=learned_severity(probability),
            confidence=round(probability, 6),
            message=f"a line reads as a request to an assistant ({request:.2f}) and not as part"
            f" of the document around it (cosine {relatedness:.2f})",
        )
    )


def reads_lines(text: str, origin: Origin, which: Collection[str]) -> bool:
    """Whether the classifier tier also reads `text` line by line for a planted request
    (services/embedding/planted.py): retrieved and tool content of several runs of lines
    only. A user's own prompt may hold a pasted document and a request of their own. Only
    whether there are runs is asked here, cut as the head cuts them (`document_runs`: []
    for a text of one); the service marks and spreads them."""
    return origin.is_untrusted_content and "classifier" in which and bool(document_runs(text))


def _with_planted_line(
    analysis: Analysis, probability: float, request: float, related: float
) -> Analysis:
    if probability < MIN_REPORTED:
        return analysis
    found = planted_line_finding(probability, request, related)
    return Analysis((*analysis.findings, found), analysis.unavailable)


def _as_float32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])


@dataclasses.dataclass(frozen=True, slots=True)
class Classified:
    """The embedding service's Classify answer for one text."""

    probability: float
    language: str
    document_probability: float
    """What retrieved and tool content reads as (`ClassifyResponse.document_probabilities`)."""
    document_language: str

    def reading(self, as_document: bool) -> tuple[float, str]:
        """The probability and its language for a prompt, or for retrieved and tool content."""
        if as_document:
            return self.document_probability, self.document_language
        return self.probability, self.language


def reads_as_document(origin: Origin, document_attack_encoder: bool) -> bool:
    """Whether the classifier's document reading is the one for `origin`: retrieved and
    tool content, unless the deployment lets the attack encoder flag it alone too."""
    return origin.is_untrusted_content and not document_attack_encoder


class LocalLearned:
    """The embedding tiers library in this process (the CLI's full cascade): `tiers`, or
    the library loaded from the environment's settings. `document_attack_encoder`: read
    retrieved and tool content as prompts are, the attack encoder flagging it alone too
    (GatewaySettings.document_attack_encoder)."""

    def __init__(
        self, tiers: EmbeddingTiers | None = None, document_attack_encoder: bool = False
    ) -> None:
        self._document_attack_encoder = document_attack_encoder
        if tiers is None:
            from mithril.services.embedding.config import EmbeddingSettings
            from mithril.services.embedding.tiers import EmbeddingTiers

            tiers = EmbeddingTiers.load(EmbeddingSettings())
        self._tiers = tiers

    async def learned(self, text: str, origin: Origin, which: Collection[str]) -> Analysis:
        planted = self._tiers.planted is not None and reads_lines(text, origin, which)
        if planted:
            (score,), (reading,) = await asyncio.gather(
                self._tiers.score([text]), self._tiers.read_lines([text])
            )
        else:
            (score,) = await self._tiers.score([text])
        nearest = score.neighbors[0].entry.category if score.neighbors else ""
        classified = Classified(
            score.probability, score.language, score.for_documents, score.language_for_documents
        )
        probability, language = classified.reading(
            reads_as_document(origin, self._document_attack_encoder)
        )
        analysis = Analysis(
            learned_findings(
                which,
                _as_float32(score.similarity),
                _as_float32(score.max_similarity),
                nearest,
                _as_float32(probability),
                language,
                _as_float32(score.near_copy),
            )
        )
        if not planted:
            return analysis
        return _with_planted_line(
            analysis,
            _as_float32(reading.probability),
            _as_float32(reading.request),
            _as_float32(reading.relatedness),
        )

    async def close(self) -> None:
        return None


class RemoteLearned:
    """EmbeddingService over gRPC: ScoreSimilarity and Classify, batched under load."""

    def __init__(
        self, target: str, token: str, timeout: float, document_attack_encoder: bool = False
    ) -> None:
        """`document_attack_encoder`: as `LocalLearned` takes it."""
        self._document_attack_encoder = document_attack_encoder
        self._channel = open_channel(target)
        self._stub = embedding_service_pb2_grpc.EmbeddingServiceStub(self._channel)
        self._metadata: Sequence[tuple[str, str]] = bearer_metadata(token)
        self._timeout = timeout
        self._similarity: MicroBatcher[str, embedding_service_pb2.SimilarityScore] = MicroBatcher(
            self._similarity_batch, max_items=32
        )
        self._classify: MicroBatcher[str, Classified] = MicroBatcher(
            self._classify_batch, max_items=32
        )
        self._read_lines: MicroBatcher[str, embedding_service_pb2.LineReading] = MicroBatcher(
            self._read_lines_batch, max_items=8
        )
        self._lines_off = False
        """Set once the service answers that it runs without the planted-line head."""

    async def _similarity_batch(
        self, texts: list[str]
    ) -> list[embedding_service_pb2.SimilarityScore]:
        reply = await self._stub.ScoreSimilarity(
            embedding_service_pb2.ScoreSimilarityRequest(texts=texts, top_k=1),
            timeout=self._timeout,
            metadata=self._metadata,
        )
        return list(reply.scores)

    async def _classify_batch(self, texts: list[str]) -> list[Classified]:
        reply = await self._stub.Classify(
            embedding_service_pb2.ClassifyRequest(texts=texts),
            timeout=self._timeout,
            metadata=self._metadata,
        )
        languages = list(reply.languages) or [""] * len(reply.probabilities)
        # A service from before documents were read apart sends none: read them as prompts.
        documents = list(reply.document_probabilities) or list(reply.probabilities)
        document_languages = list(reply.document_languages) or languages
        return [
            Classified(*read)
            for read in zip(
                reply.probabilities, languages, documents, document_languages, strict=True
            )
        ]

    async def _read_lines_batch(self, texts: list[str]) -> list[embedding_service_pb2.LineReading]:
        reply = await self._stub.ReadLines(
            embedding_service_pb2.ReadLinesRequest(texts=texts),
            timeout=self._timeout,
            metadata=self._metadata,
        )
        return list(reply.readings)

    async def _planted_line(self, text: str) -> embedding_service_pb2.LineReading | None:
        """The service's reading of `text`'s lines; None when it runs without the head."""
        if self._lines_off:
            return None
        try:
            return await self._read_lines.submit(text)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
                raise
            _log.info("the embedding service reads no lines: %s", error.details())
            self._lines_off = True
            return None

    async def learned(self, text: str, origin: Origin, which: Collection[str]) -> Analysis:
        reading = None
        try:
            if reads_lines(text, origin, which):
                analysis, reading = await asyncio.gather(
                    self._scores(text, origin, which), self._planted_line(text)
                )
            else:
                analysis = await self._scores(text, origin, which)
        except grpc.aio.AioRpcError as error:
            if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise ServiceUnavailableError("embedding", error.code().name) from error
            raise
        if reading is None:
            return analysis
        return _with_planted_line(
            analysis, reading.probability, reading.request, reading.relatedness
        )

    async def _scores(self, text: str, origin: Origin, which: Collection[str]) -> Analysis:
        similarity, probability, max_similarity, nearest, language = 0.0, 0.0, 0.0, "", ""
        near_copy = 0.0
        if "embedding" in which:
            scored = await self._similarity.submit(text)
            similarity, near_copy = scored.score, scored.near_copy
            if scored.neighbors:
                max_similarity = scored.neighbors[0].similarity
                nearest = scored.neighbors[0].category
        if "classifier" in which:
            classified = await self._classify.submit(text)
            probability, language = classified.reading(
                reads_as_document(origin, self._document_attack_encoder)
            )
        return Analysis(
            learned_findings(
                which, similarity, max_similarity, nearest, probability, language, near_copy
            )
        )

    async def close(self) -> None:
        await self._channel.close()


class RemoteJudge:
    """JudgeService over gRPC."""

    def __init__(self, target: str, token: str, timeout: float) -> None:
        self._channel = open_channel(target)
        self._stub = judge_service_pb2_grpc.JudgeServiceStub(self._channel)
        self._metadata: Sequence[tuple[str, str]] = bearer_metadata(token)
        self._timeout = timeout

    async def judge(self, text: str, origin: Origin) -> Finding | None:
        try:
            reply = await self._stub.Judge(
                judge_service_pb2.JudgeRequest(text=text, origin=int(origin)),  # type: ignore[arg-type]
                timeout=self._timeout,
                metadata=self._metadata,
            )
        except grpc.aio.AioRpcError as error:
            _log.info("judge skipped", extra={"grpc_status": error.code().name})
            return None
        verdict = _VERDICT_NAMES.get(reply.verdict, "uncertain")
        return judge_finding(verdict, reply.score, reply.model)

    async def close(self) -> None:
        await self._channel.close()


class LocalJudge:
    """The judge library in this process (one instance: it owns the cache and the pool)."""

    def __init__(self) -> None:
        from mithril.services.judge import Judge, JudgeSettings

        self._judge = Judge.from_settings(JudgeSettings())

    @property
    def available(self) -> bool:
        return bool(self._judge.available)

    async def judge(self, text: str, origin: Origin) -> Finding | None:
        from mithril.services.judge.errors import JudgeError

        try:
            result = await self._judge.judge(text, origin)
        except JudgeError as error:
            _log.info("judge skipped", extra={"reason": error.reason})
            return None
        return judge_finding(str(result.verdict), result.score, result.model)

    async def close(self) -> None:
        await self._judge.aclose()


class LearnedBackend(Protocol):
    async def learned(self, text: str, origin: Origin, which: Collection[str]) -> Analysis: ...

    async def close(self) -> None: ...


class JudgeBackend(Protocol):
    async def judge(self, text: str, origin: Origin) -> Finding | None: ...

    async def close(self) -> None: ...


class Tiers:
    """`cascade.LearnedTiers` from a learned-tier backend and a judge, either optional."""

    def __init__(
        self,
        learned: LearnedBackend | None,
        judge: JudgeBackend | None,
        enabled: frozenset[str] = frozenset({"embedding", "classifier", "judge"}),
        document_threshold: float = OFF,
    ) -> None:
        """`document_threshold`: where the classifier's probability on retrieved and tool
        content counts as 0.5 (`document_scale.py`; 0.5, off, by default)."""
        self._learned = learned
        self._judge = judge
        self.document_threshold = document_threshold
        names = set()
        if learned is not None:
            names |= {"embedding", "classifier"} & enabled
        if judge is not None:
            names.add(JUDGE)
        self.names = frozenset(names)

    async def learned(self, text: str, origin: Origin, which: Collection[str]) -> Analysis:
        """The learned tiers' findings on what `text` says: its obfuscation (fullwidth or
        lookalike letters, leetspeak, invisible characters, encoded segments) undone first,
        since they learned plain text (`services/scanner/readable.py`); how it is written is
        the rules' finding.

        Retrieved or tool content that is a table has each line of prose among its rows
        read on its own too, as a prompt is (`services/scanner/tables.py`): the stronger
        finding of each kind stands, a line's saying where it was found. On retrieved and
        tool content the classifier's probability is read on the documents' scale when the
        deployment sets one (`document_scale.py`)."""
        if self._learned is None:
            return Analysis(())
        lines = prose_among_rows(text) if origin.is_untrusted_content else []
        try:
            whole, *alone = await asyncio.gather(
                *(self._learned.learned(as_read(part), origin, which) for part in [text, *lines])
            )
        except ServiceUnavailableError as error:
            return Analysis((), (error.service,))
        strongest = _strongest(whole, [_found_in_table(analysis) for analysis in alone])
        if origin.is_untrusted_content:
            return rescaled(strongest, self.document_threshold)
        return strongest

    async def judge(self, text: str, origin: Origin) -> Finding | None:
        return None if self._judge is None else await self._judge.judge(text, origin)

    async def close(self) -> None:
        if self._learned is not None:
            await self._learned.close()
        if self._judge is not None:
            await self._judge.close()


def _found_in_table(analysis: Analysis) -> Analysis:
    """A line's findings, their messages saying where the line was."""
    return Analysis(
        tuple(
            dataclasses.replace(f, message=f"{f.message} (a line of prose among a table's rows)")
            for f in analysis.findings
        ),
        analysis.unavailable,
    )


def _strongest(whole: Analysis, lines: Sequence[Analysis]) -> Analysis:
    """Of each rule's findings over the whole text and its lines, the most confident (the
    whole text's on a tie)."""
    best = {f.rule_id: f for f in whole.findings}
    unavailable = dict.fromkeys(whole.unavailable)
    for analysis in lines:
        unavailable.update(dict.fromkeys(analysis.unavailable))
        for f in analysis.findings:
            current = best.get(f.rule_id)
            if current is None or f.confidence > current.confidence:
                best[f.rule_id] = f
    return Analysis(tuple(best.values()), tuple(unavailable))


def remote_tiers(settings: GatewaySettings) -> Tiers:
    """The learned tiers and the judge this deployment runs: their services, at their
    addresses (`learned_tiers` says which)."""
    enabled = set(settings.learned_tiers)
    learned = (
        RemoteLearned(
            settings.embedding_addr,
            settings.service_token,
            settings.service_timeout_seconds,
            settings.document_attack_encoder,
        )
        if enabled & {"embedding", "classifier"}
        else None
    )
    judge = (
        RemoteJudge(settings.judge_addr, settings.service_token, settings.judge_timeout_seconds)
        if "judge" in enabled
        else None
    )
    return Tiers(learned, judge, frozenset(enabled), settings.document_classifier_threshold)


def local_tiers(document_threshold: float = OFF, document_attack_encoder: bool = False) -> Tiers:
    """Every tier in this process: the embedding library, and the judge library when an
    LLM is configured (MITHRIL_JUDGE_BASE_URL). `document_threshold`: as `Tiers` takes it;
    `document_attack_encoder`: as `LocalLearned` does."""
    judge = LocalJudge()
    return Tiers(
        LocalLearned(document_attack_encoder=document_attack_encoder),
        judge if judge.available else None,
        document_threshold=document_threshold,
    )
