"""Verified shared memory in an embedded, offline Cognee (1.6.5).

Only claims the gate accepted reach this store. Each is added to one Cognee dataset
tagged with the node set ``["verified", <source>]`` (plus ``"low_confidence"`` for a
"warn" decision); searches return chunks of the ``verified`` node set only.

Writes
    With an LLM configured, `add_verified` runs Cognee's ``remember()`` (add + cognify:
    chunks, entity graph and summary, one connection test then two LLM calls per text).
    Without one, it runs ``add()`` and a pipeline of Cognee tasks that need no LLM
    (classify_documents, extract_chunks_from_documents, add_data_points): chunks and
    their embeddings, no entity graph. Either way Cognee dedupes by content hash and the
    first write wins, so adding the same text again is a no-op.

Reads
    `search_verified` queries Cognee's own vector store directly: the ``DocumentChunk_text``
    LanceDB table Cognee writes, the query embedded by Cognee's embedding engine (the
    embedding service's all-MiniLM-L6-v2 int8 ONNX through fastembed), filtered on the
    chunk's ``belongs_to_set`` with the same expression Cognee's own chunk search uses.
    That is what ``recall(query_type=CHUNKS, node_name=["verified"])`` does underneath,
    without recall's per-query bookkeeping (routing, session and history lookups, conflict
    annotation), which costs about 0.2 s a query here; `recall_verified` keeps that
    route for comparison.

Threads
    Cognee's calls block their event loop (synchronous SQLite, LanceDB and ONNX calls:
    a single write stalled its loop for up to 0.2 s). All Cognee work therefore runs on
    a dedicated thread with its own event loop; callers await it through
    ``asyncio.wrap_future`` and their own loop (the gate's gRPC server) keeps serving.
    Cognee binds engines, locks and pooled connections to the loop that created them,
    so that thread lives for the whole process and is shared by every store. Searches
    run on a second thread with its own loop and its own read-only LanceDB handle, so a
    read never waits behind a write's synchronous stretches.

Process-wide configuration
    Cognee keeps its settings in process-global caches (environment variables read once,
    ``lru_cache``d configs and engines). One process can therefore hold one Cognee root
    and one LLM setting: stores with the same root and LLM may coexist (sharing it); a
    store with another root or LLM in the same process raises `CogneeConfigError`. Run
    it in another process.

Cognee persists raw claim text under ``root``; callers redact first. Nothing here logs
claim or query text, and Cognee's own records below WARNING are dropped (it logs
queries at INFO).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from mithril.services.memorygate.cognee_env import (
    EMBEDDING_DIMENSIONS,
    LLMConfig,
    configure_environment,
)

__all__ = ["CogneeConfigError", "CogneeStore", "CogneeStoreError", "LLMConfig", "StoredChunk"]

log = logging.getLogger(__name__)

T = TypeVar("T")

VERIFIED = "verified"
LOW_CONFIDENCE = "low_confidence"
CHUNK_COLLECTION = "DocumentChunk_text"
PIPELINE_NAME = "mithril_verified_chunks"


@dataclass(frozen=True)
class StoredChunk:
    text: str
    score: float
    """Relevance in 0..1, higher is closer: 1 - cosine distance, clipped."""
    node_sets: tuple[str, ...]
    """The chunk's node sets (``verified``, the source, maybe ``low_confidence``)."""


class CogneeStoreError(RuntimeError):
    """Cognee failed to store or search."""


class CogneeConfigError(CogneeStoreError):
    """Another Cognee root or LLM setting is already active in this process."""


def _relevance(distance: float) -> float:
    return max(0.0, min(1.0, 1.0 - float(distance)))


def _sql_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


# --------------------------------------------------------------------------------------
# Threads with their own event loops


class _LoopThread:
    """A daemon thread running one event loop; coroutines are submitted from any loop."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    async def run(self, coro: Coroutine[Any, Any, T], *, shield: bool = False) -> T:
        """Await `coro` on this thread's loop. With `shield`, a cancelled caller stops
        waiting but the work still finishes (a half-done write is worse than a late one)."""
        future = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))
        if shield:
            return await asyncio.shield(future)
        return await future

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self.loop.close()


def _drop_below_warning(_logger: Any, method_name: str, event_dict: Any) -> Any:
    """structlog processor: Cognee's info and debug records carry queries and texts."""
    import structlog

    if method_name in ("debug", "info", "msg", "trace"):
        raise structlog.DropEvent
    return event_dict


def _render_for_host(_logger: Any, _method_name: str, event_dict: Any) -> str:
    """structlog's last processor: a plain message for the host's logging handlers
    (Cognee's own console handler, which expected a structlog dict, was removed)."""
    event = event_dict.pop("event", "")
    for key in ("timestamp", "level", "logger"):
        event_dict.pop(key, None)
    extras = " ".join(f"{key}={value}" for key, value in event_dict.items())
    return f"{event} {extras}".strip()


def _quiet_cognee_logging() -> None:
    """Drop Cognee's records below WARNING (they carry queries and texts) and render
    the rest as plain messages. In place: loggers Cognee cached at import share the list."""
    import structlog

    processors = structlog.get_config()["processors"]
    if _drop_below_warning not in processors:
        processors.insert(0, _drop_below_warning)
    for index, processor in enumerate(processors):
        if processor is structlog.stdlib.ProcessorFormatter.wrap_for_formatter:
            processors[index] = _render_for_host
    # Plain stdlib loggers of Cognee and its libraries (migrations, LLM client).
    for name in ("cognee", "alembic", "LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.WARNING)


@contextlib.contextmanager
def _keep_process_logging() -> Any:
    """`import cognee` replaces the root logger's handlers and level and sys.excepthook
    (its setup_logging). Put the host's back afterwards."""
    root = logging.getLogger()
    handlers, filters, level = list(root.handlers), list(root.filters), root.level
    excepthook = sys.excepthook
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.filters[:] = filters
        root.setLevel(level)
        sys.excepthook = excepthook


class _CogneeRuntime:
    """The one Cognee of this process: its configuration and the thread it runs on."""

    _lock = threading.Lock()
    _current: _CogneeRuntime | None = None

    def __init__(self, root: Path, llm: LLMConfig | None) -> None:
        self.root = root
        self.llm = llm
        self.writer = _LoopThread("cognee")
        self.imported = False
        self.max_chunk_tokens = 0
        self.vector_url = ""
        self.embedding_engine: Any = None
        self.write_lock: asyncio.Lock | None = None  # created on the writer loop
        self._start_lock: asyncio.Lock | None = None

    @classmethod
    def acquire(cls, root: Path, llm: LLMConfig | None) -> _CogneeRuntime:
        with cls._lock:
            current = cls._current
            if current is None:
                cls._current = current = cls(root, llm)
            elif current.root != root or current.llm != llm:
                raise CogneeConfigError(
                    f"Cognee is already configured in this process for {current.root} "
                    f"(LLM: {'yes' if current.llm else 'none'}); it keeps one root and one "
                    "LLM setting per process. Use another process for another store."
                )
            return current

    async def start(self) -> None:
        """On the writer loop: environment, import, database setup, embedding warm-up."""
        if self.write_lock is None or self._start_lock is None:
            self.write_lock, self._start_lock = asyncio.Lock(), asyncio.Lock()
        async with self._start_lock:  # two stores starting at once import and set up once
            if not self.imported:
                await self._import_and_set_up()

    async def _import_and_set_up(self) -> None:
        configure_environment(self.root, self.llm)
        with _keep_process_logging():
            import cognee  # only now: configured above, it reads the environment at import
        _quiet_cognee_logging()

        from cognee.infrastructure.databases.vector import get_vector_engine_async
        from cognee.infrastructure.databases.vector.config import get_vectordb_config
        from cognee.infrastructure.llm.utils import get_max_chunk_tokens
        from cognee.modules.engine.operations.setup import setup

        await setup()
        # Imported now rather than inside the first write (which it would slow by ~1 s).
        import cognee.infrastructure.databases.vector.compact_vector_store
        import cognee.tasks.documents
        import cognee.tasks.storage  # noqa: F401

        vector_engine = await get_vector_engine_async()
        self.embedding_engine = vector_engine.embedding_engine
        await self.embedding_engine.embed_text(["warm-up"])
        self.max_chunk_tokens = await get_max_chunk_tokens()
        self.vector_url = get_vectordb_config().vector_db_url
        self.imported = True


# --------------------------------------------------------------------------------------
# The store


class CogneeStore:
    """Verified claims in Cognee. Create, `await start()`, use, `await close()`."""

    def __init__(
        self, root: Path, *, llm: LLMConfig | None = None, dataset: str = "mithril_verified"
    ) -> None:
        self.root = Path(root).expanduser().resolve()
        self.llm = llm
        self.dataset = dataset
        self._runtime: _CogneeRuntime | None = None
        self._reader: _LoopThread | None = None
        self._table: Any = None  # LanceDB table handle, on the reader loop
        self._connection: Any = None
        self.timings: dict[str, float] = {}
        """Seconds of the last start phases and writes, for benchmarks and logs."""

    # ---------------------------------------------------------------- lifecycle

    @property
    def started(self) -> bool:
        return self._runtime is not None and self._reader is not None

    async def start(self) -> None:
        """Configure the environment, import Cognee, set up its stores and warm up the
        embedding model and the vector search (the first search in a fresh process is
        otherwise seconds slow). Runs on Cognee's thread; the caller's loop stays free."""
        if self.started:
            return
        began = time.perf_counter()
        runtime = _CogneeRuntime.acquire(self.root, self.llm)
        await runtime.writer.run(runtime.start(), shield=True)
        self.timings["start_cognee"] = time.perf_counter() - began
        self._runtime = runtime
        self._reader = _LoopThread("cognee-read")
        warm = time.perf_counter()
        await self._reader.run(self._open_reader())
        await self.search_verified("warm-up", 1)
        self.timings["start_search_warmup"] = time.perf_counter() - warm
        self.timings["start"] = time.perf_counter() - began
        log.info(
            "cognee store started",
            extra={
                "dataset": self.dataset,
                "llm": self.llm is not None,
                "seconds": round(self.timings["start"], 2),
            },
        )

    async def close(self, grace: float = 30.0) -> None:
        """Wait (up to `grace` s) for writes in flight, then stop this store's reader.
        Cognee's own thread stays for the process: its engines are bound to that loop."""
        reader, self._reader = self._reader, None
        runtime, self._runtime = self._runtime, None
        if runtime is not None and runtime.write_lock is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(runtime.writer.run(_drain(runtime.write_lock)), grace)
        if reader is None:
            return
        with contextlib.suppress(Exception):
            await reader.run(self._close_reader())
        await asyncio.to_thread(reader.stop)

    async def __aenter__(self) -> CogneeStore:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ---------------------------------------------------------------- writes

    async def add_verified(self, text: str, *, source: str, low_confidence: bool) -> None:
        """Store an accepted claim in the verified node set. Idempotent: Cognee dedupes
        by content hash (the first write's tags stay). Completes even if the caller is
        cancelled."""
        if not text.strip():
            raise ValueError("empty claim")
        if not source or source in (VERIFIED, LOW_CONFIDENCE):
            raise ValueError("source must be a non-empty name other than the reserved tags")
        node_set = [VERIFIED, source, *([LOW_CONFIDENCE] if low_confidence else [])]
        runtime = self._require_started()
        began = time.perf_counter()
        await runtime.writer.run(self._write(runtime, text, node_set), shield=True)
        self.timings["add"] = time.perf_counter() - began

    async def _write(self, runtime: _CogneeRuntime, text: str, node_set: list[str]) -> None:
        assert runtime.write_lock is not None
        async with runtime.write_lock:  # one Cognee pipeline at a time
            try:
                if self.llm is not None:
                    await self._remember(text, node_set)
                else:
                    await self._add_without_llm(runtime, text, node_set)
            except CogneeStoreError:
                raise
            except Exception as error:
                # Only the type: Cognee's messages can quote the stored text.
                raise CogneeStoreError(
                    f"Cognee could not store the claim ({type(error).__name__})"
                ) from error

    async def _remember(self, text: str, node_set: list[str]) -> None:
        import cognee

        result = await cognee.remember(
            text, dataset_name=self.dataset, node_set=node_set, self_improvement=False
        )
        status = getattr(result, "status", "completed")
        if status != "completed":
            raise CogneeStoreError(f"Cognee remember() ended {status}")

    async def _add_without_llm(
        self, runtime: _CogneeRuntime, text: str, node_set: list[str]
    ) -> None:
        import cognee
        from cognee.infrastructure.databases.vector.compact_vector_store import (
            compact_vector_store,
        )
        from cognee.modules.pipelines.models import PipelineRunErrored
        from cognee.modules.pipelines.tasks.task import Task
        from cognee.tasks.documents import classify_documents, extract_chunks_from_documents
        from cognee.tasks.storage import add_data_points

        added = await cognee.add(text, dataset_name=self.dataset, node_set=node_set)
        _raise_if_errored(added, PipelineRunErrored, "add")
        data = await _added_rows(added)
        tasks = [
            Task(classify_documents, needs_llm=False),
            Task(
                extract_chunks_from_documents,
                max_chunk_size=runtime.max_chunk_tokens,
                needs_llm=False,
            ),
            Task(add_data_points, needs_llm=False),
        ]
        # Incremental: only data this pipeline has not processed yet (the new text).
        ran = await cognee.run_custom_pipeline(
            tasks=tasks,
            data=data,
            dataset=self.dataset,
            incremental_loading=True,
            pipeline_name=PIPELINE_NAME,
        )
        _raise_if_errored(ran, PipelineRunErrored, "chunk pipeline")
        # As cognify does after each run: fold the fragment each upsert appends, or every
        # search scans one fragment per stored claim (32 ms instead of 11 at 50 claims).
        await compact_vector_store()

    # ---------------------------------------------------------------- reads

    async def search_verified(
        self, query: str, top_k: int, *, vector: Sequence[float] | None = None
    ) -> list[StoredChunk]:
        """Chunks of the verified node set closest to `query`, best first.

        `vector`, if given, is `query`'s embedding from the embedding service (the same
        model, tokenizer and pooling: cosine 1.0000 against Cognee's for texts within 254
        tokens); it saves the ~15 ms Cognee's engine takes to embed the query.
        """
        if top_k <= 0 or not query.strip():
            return []
        if vector is not None and len(vector) != EMBEDDING_DIMENSIONS:
            raise ValueError(f"vector must have {EMBEDDING_DIMENSIONS} dimensions")
        reader = self._require_reader()
        return await reader.run(self._search(query, top_k, vector))

    async def _open_reader(self) -> None:
        import lancedb

        runtime = self._require_started()
        # Strong consistency: every query sees Cognee's latest committed version.
        self._connection = await lancedb.connect_async(
            runtime.vector_url, read_consistency_interval=timedelta(0)
        )
        await self._open_table()

    async def _open_table(self) -> Any:
        if self._table is None and self._connection is not None:
            try:
                self._table = await self._connection.open_table(CHUNK_COLLECTION)
            except (ValueError, FileNotFoundError, RuntimeError):
                self._table = None  # nothing stored yet
        return self._table

    async def _close_reader(self) -> None:
        table, self._table = self._table, None
        connection, self._connection = self._connection, None
        for handle in (table, connection):
            close = getattr(handle, "close", None)
            if close is not None:
                result = close()
                if asyncio.iscoroutine(result):
                    await result

    async def _search(
        self, query: str, top_k: int, vector: Sequence[float] | None
    ) -> list[StoredChunk]:
        runtime = self._require_started()
        if vector is None:
            vector = (await runtime.embedding_engine.embed_text([query]))[0]
        table = await self._open_table()
        if table is None:
            return []
        rows = await (
            table.vector_search([float(x) for x in vector])
            .distance_type("cosine")
            .where(f"array_has_any(payload.belongs_to_set, [{_sql_literal(VERIFIED)}])")
            .select(
                {
                    "text": "payload.text",
                    "node_sets": "payload.belongs_to_set",
                    "_distance": "_distance",
                }
            )
            .limit(top_k)
            .to_list()
        )
        chunks = [
            StoredChunk(
                text=row["text"],
                score=_relevance(row["_distance"]),
                node_sets=tuple(row["node_sets"] or ()),
            )
            for row in rows
        ]
        # The filter already did this; a chunk outside the verified set must never leak.
        return [chunk for chunk in chunks if VERIFIED in chunk.node_sets]

    async def recall_verified(self, query: str, top_k: int) -> list[StoredChunk]:
        """The same search through Cognee's public ``recall(CHUNKS, node_name=["verified"])``
        (slower: about 0.2 s a query here). Kept to compare against `search_verified`."""
        if top_k <= 0 or not query.strip():
            return []
        runtime = self._require_started()
        return await runtime.writer.run(self._recall(query, top_k))

    async def _recall(self, query: str, top_k: int) -> list[StoredChunk]:
        import cognee
        from cognee.api.v1.search import SearchType
        from cognee.modules.retrieval.exceptions.exceptions import NoDataError

        try:
            results = await cognee.recall(
                query,
                query_type=SearchType.CHUNKS,
                datasets=[self.dataset],
                node_name=[VERIFIED],
                top_k=top_k,
            )
        except NoDataError:
            return []
        chunks = []
        for result in results or []:
            raw = getattr(result, "raw", None) or {}
            node_sets = tuple(raw.get("belongs_to_set") or ())
            if VERIFIED not in node_sets:
                continue
            score = getattr(result, "score", None)
            chunks.append(
                StoredChunk(
                    text=str(getattr(result, "text", "") or raw.get("text", "")),
                    score=_relevance(score if score is not None else 1.0),
                    node_sets=node_sets,
                )
            )
        return chunks

    async def run_in_cognee(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run ``make()`` on Cognee's thread and loop, where its engines live (for
        maintenance and tests that call Cognee directly). Not serialised with writes."""
        runtime = self._require_started()
        return await runtime.writer.run(make())

    # ---------------------------------------------------------------- improve

    async def improve(self) -> str:
        """Run Cognee's ``improve()`` on the dataset, then Cognee's vector compaction;
        say in words what each did (including when it did nothing)."""
        runtime = self._require_started()
        return await runtime.writer.run(self._improve(runtime), shield=True)

    async def _improve(self, runtime: _CogneeRuntime) -> str:
        import cognee
        from cognee.infrastructure.databases.vector.compact_vector_store import (
            _summarize,
            compact_vector_store,
        )
        from cognee.modules.data.exceptions import DatasetNotFoundError

        assert runtime.write_lock is not None
        async with runtime.write_lock:
            try:
                result = await cognee.improve(dataset=self.dataset)
            except DatasetNotFoundError:
                return "Nothing is stored yet, so Cognee's improve was not run."
            compaction = await compact_vector_store()
        return _describe_improve(result, _summarize(compaction) if compaction else None)

    # ---------------------------------------------------------------- helpers

    def _require_started(self) -> _CogneeRuntime:
        if self._runtime is None or not self._runtime.imported:
            raise CogneeStoreError("CogneeStore is not started")
        return self._runtime

    def _require_reader(self) -> _LoopThread:
        if self._reader is None:
            raise CogneeStoreError("CogneeStore is not started")
        return self._reader


async def _added_rows(added: Any) -> list[Any] | None:
    """The Data rows `cognee.add` wrote (or found), so the pipeline runs on those alone
    instead of listing the whole dataset (which grows the cost of each write)."""
    from cognee.modules.data.methods import get_data
    from cognee.modules.users.methods import get_default_user

    ids = [
        item["data_id"]
        for item in (getattr(added, "data_ingestion_info", None) or [])
        if isinstance(item, dict) and item.get("data_id") is not None
    ]
    if not ids:
        return None  # fall back to the whole dataset (incremental: new data only)
    user = await get_default_user()
    rows = [await get_data(user.id, data_id, added.dataset_id) for data_id in ids]
    return [row for row in rows if row is not None] or None


async def _drain(lock: asyncio.Lock) -> None:
    """Returns once the writes queued before it have finished."""
    async with lock:
        pass


def _raise_if_errored(result: Any, errored: type, step: str) -> None:
    runs = result.values() if isinstance(result, dict) else [result]
    for run in runs:
        if isinstance(run, errored):
            detail = getattr(run, "error_class", None) or "error"
            raise CogneeStoreError(f"Cognee {step} failed ({detail})")


def _describe_improve(result: Any, compaction: str | None) -> str:
    stages = list(getattr(result, "stages", []) or [])
    ran = [s for s in stages if s.status not in ("skipped", "already_completed")]
    skipped: dict[str, list[str]] = {}
    for stage in stages:
        if stage.status in ("skipped", "already_completed"):
            skipped.setdefault(stage.reason or stage.status, []).append(stage.stage)
    parts: list[str] = []
    if not stages:
        parts.append("Cognee's improve reported no stages")
    elif not ran:
        reasons = "; ".join(f"{reason}: {len(names)}" for reason, names in skipped.items())
        parts.append(
            f"Cognee's improve changed nothing: all {len(stages)} stages were skipped "
            f"({reasons}). Its stages learn from sessions, feedback and an LLM, which the "
            "memory gate does not feed it"
        )
    else:
        done = ", ".join(f"{s.stage} ({s.status})" for s in ran)
        parts.append(f"Cognee's improve ran {len(ran)} of {len(stages)} stages: {done}")
    if compaction:
        parts.append(f"vector store compaction: {compaction}")
    return "; ".join(parts) + "."
