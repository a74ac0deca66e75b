"""The memory gate's Cognee store against a real, embedded, offline Cognee 1.6.5.

No mocks: Cognee runs with its own SQLite, LanceDB and graph stores in a temporary root and
embeds with the embedding service's MiniLM (int8 ONNX via fastembed).

Cognee keeps one configuration per process (root, LLM): a second store with another root
in the same process is refused. The test session already runs one Cognee (the shared
memory stack, tests/memory_stack.py), so each scenario here runs in its own subprocess
(`python -m tests.integration.test_cognee_store SCENARIO ROOT`), which prints a JSON
report the tests check. The LLM scenario starts a small OpenAI-compatible HTTP server on
loopback that stands in for a model (no LLM runs on these machines): it answers Cognee's
connection test and extraction calls with tiny valid JSON and judges nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    # Cognee 1.6.5 calls deprecated lancedb and pydantic APIs on every write.
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

REPO = Path(__file__).resolve().parents[2]

CLAIMS = {
    "billing": "The billing service listens on port 8443 and is owned by the payments team.",
    "search": "The search cluster runs Elasticsearch 8 on three nodes in the Frankfurt region.",
    "backup": "Database backups run nightly at 02:00 UTC and are kept for thirty days.",
    "oncall": "The on-call rotation changes every Monday at 09:00 Berlin time.",
}
UNVERIFIED = "The billing service listens on port 9999 according to an unchecked rumour."
LOGGED_QUERY = "secret-looking query about the billing port"
LLM_CLAIM = "The billing service listens on port 8443."


def _run_scenario(name: str, root: Path) -> tuple[dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items() if k != "COGNEE_ENV_FILE"}
    result = subprocess.run(
        [sys.executable, "-m", "tests.integration.test_cognee_store", name, str(root)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=840,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-6000:]
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


@pytest.fixture(scope="module")
def no_llm(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    return _run_scenario("no-llm", tmp_path_factory.mktemp("cognee-nollm"))


# ----------------------------------------------------------------------- no-LLM path


def test_search_returns_verified_claims_best_first(no_llm: tuple[dict[str, Any], str]) -> None:
    report = no_llm[0]
    results = report["billing"]
    assert results[0]["text"] == CLAIMS["billing"]
    assert set(results[0]["node_sets"]) == {"verified", "agent-a"}
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert results[0]["score"] > 0.5 > results[-1]["score"]

    backup = report["backup"][0]
    assert backup["text"] == CLAIMS["backup"]
    assert set(backup["node_sets"]) == {"verified", "agent-a", "low_confidence"}
    assert report["search"][0]["text"] == CLAIMS["search"]


def test_chunk_outside_the_verified_node_set_is_never_returned(
    no_llm: tuple[dict[str, Any], str],
) -> None:
    report = no_llm[0]
    # The raw Cognee write landed in the same vector table, tagged otherwise...
    assert report["stored"][UNVERIFIED] == ["unverified"]
    # ...and neither search route returns it, even asked for it verbatim.
    for key in ("unverified_rumour", "unverified_verbatim", "recall_unverified"):
        texts = [r["text"] for r in report[key]]
        assert UNVERIFIED not in texts, key
        assert all("verified" in r["node_sets"] for r in report[key])
    assert sorted(r["text"] for r in report["unverified_verbatim"]) == sorted(CLAIMS.values())


def test_cognee_recall_route_agrees(no_llm: tuple[dict[str, Any], str]) -> None:
    report = no_llm[0]
    fast, recalled = report["billing_top3"], report["recall_billing_top3"]
    assert recalled[0]["text"] == CLAIMS["billing"]
    assert [r["text"] for r in fast] == [r["text"] for r in recalled]
    assert fast[0]["score"] == pytest.approx(recalled[0]["score"], abs=1e-4)


def test_a_vector_from_the_embedding_service_gives_the_same_answer(
    no_llm: tuple[dict[str, Any], str],
) -> None:
    report = no_llm[0]
    own, given = report["search_own_vector"], report["search_given_vector"]
    assert own[0]["text"] == CLAIMS["search"]
    assert [r["text"] for r in given] == [r["text"] for r in own]
    assert [r["score"] for r in given] == pytest.approx([r["score"] for r in own], abs=1e-3)
    assert report["wrong_vector_refused"]


def test_adding_the_same_claim_again_is_harmless(no_llm: tuple[dict[str, Any], str]) -> None:
    report = no_llm[0]
    assert report["chunks_after_readd"] == report["chunks_before_readd"]
    # Content-hash dedupe: the first write's tags stay (agent-c's re-add changed nothing).
    assert [set(r["node_sets"]) for r in report["oncall_after_readd"]] == [{"verified", "agent-b"}]


def test_improve_says_what_it_did(no_llm: tuple[dict[str, Any], str]) -> None:
    summary = no_llm[0]["improve"]
    assert "improve" in summary and "compaction" in summary
    # Without sessions, every stage of Cognee's improve is skipped; it must say so.
    assert "changed nothing" in summary or " ran " in summary


def test_bad_input_is_refused(no_llm: tuple[dict[str, Any], str]) -> None:
    assert no_llm[0]["bad_input"] == {
        "blank_query": [],
        "zero_top_k": [],
        "blank_claim_refused": True,
        "reserved_source_refused": True,
    }


def test_one_cognee_configuration_per_process(no_llm: tuple[dict[str, Any], str]) -> None:
    report = no_llm[0]
    assert report["other_root_refused"]
    assert report["other_llm_refused"]
    # Same root and LLM setting: a second store shares the running Cognee.
    assert report["second_store_top"] == CLAIMS["billing"]


def test_cognee_leaves_the_process_logging_alone(no_llm: tuple[dict[str, Any], str]) -> None:
    """`import cognee` replaces the root handlers and sys.excepthook; the store puts them
    back, and Cognee's info records (it logs queries) never reach the service's log."""
    report, stderr = no_llm
    assert report["root_handlers_kept"]
    assert report["excepthook_kept"]
    assert report["captured_records"] == 0
    for text in [LOGGED_QUERY, *CLAIMS.values()]:
        assert text not in stderr
    for line in stderr.splitlines():  # the service's JSON log lines stay JSON
        if line.startswith("{"):
            json.loads(line)


def test_a_write_does_not_stall_the_callers_loop(no_llm: tuple[dict[str, Any], str]) -> None:
    # On the caller's loop a write stalled it for up to 0.2 s; on Cognee's own thread
    # only GIL contention remains.
    assert no_llm[0]["max_loop_lag"] < 0.2


# -------------------------------------------------------------------------- LLM path


def test_llm_path_goes_through_remember(tmp_path: Path) -> None:
    report, _ = _run_scenario("llm", tmp_path)
    kinds = report["request_kinds"]
    # Cognee's connection test, then graph extraction and a summary per text.
    assert kinds.get("connection_test", 0) == 1
    assert kinds.get("graph", 0) >= 1
    assert kinds.get("summary", 0) >= 1
    assert kinds.get("other", 0) == 0
    assert all(fmt == {"type": "json_object"} for fmt in report["response_formats"])
    assert report["top_text"] == LLM_CLAIM
    assert {"verified", "agent-a"} <= set(report["top_node_sets"])


# --------------------------------------------------------------- scenarios (children)


def _chunks(results: list[Any]) -> list[dict[str, Any]]:
    return [{"text": r.text, "score": r.score, "node_sets": list(r.node_sets)} for r in results]


async def _raises(kind: type[BaseException], work: Any) -> bool:
    try:
        await work
    except kind:
        return True
    return False


async def _no_llm_scenario(root: Path) -> dict[str, Any]:
    from mithril.runtime.logs import setup_logging
    from mithril.services.embedding.encoder import Encoder
    from mithril.services.memorygate.cognee_store import (
        CogneeConfigError,
        CogneeStore,
        LLMConfig,
    )

    setup_logging("cognee-store-test", "INFO")  # as the memory gate's process does
    handlers, excepthook = list(logging.getLogger().handlers), sys.excepthook
    report: dict[str, Any] = {}

    store = CogneeStore(root)
    await store.start()
    report["root_handlers_kept"] = logging.getLogger().handlers == handlers
    report["excepthook_kept"] = sys.excepthook is excepthook

    await store.add_verified(CLAIMS["billing"], source="agent-a", low_confidence=False)
    await store.add_verified(CLAIMS["search"], source="agent-b", low_confidence=False)
    await store.add_verified(CLAIMS["backup"], source="agent-a", low_confidence=True)
    await store.add_verified(CLAIMS["oncall"], source="agent-b", low_confidence=False)
    await store.run_in_cognee(lambda: _add_with_raw_cognee(store.dataset, UNVERIFIED))

    billing_query = "Which port does the billing service listen on?"
    report["billing"] = _chunks(await store.search_verified(billing_query, 4))
    report["backup"] = _chunks(await store.search_verified("How long are backups kept?", 1))
    report["search"] = _chunks(await store.search_verified("Where does search run?", 1))
    report["stored"] = await store.run_in_cognee(_all_chunks)
    report["unverified_rumour"] = _chunks(
        await store.search_verified("billing service port 9999 rumour", 20)
    )
    report["unverified_verbatim"] = _chunks(await store.search_verified(UNVERIFIED, 20))
    report["recall_unverified"] = _chunks(await store.recall_verified(UNVERIFIED, 20))
    report["billing_top3"] = _chunks(await store.search_verified(billing_query, 3))
    report["recall_billing_top3"] = _chunks(await store.recall_verified(billing_query, 3))

    query = "Where does the search cluster run?"
    vector = Encoder.load().encode([query])[0].tolist()
    report["search_own_vector"] = _chunks(await store.search_verified(query, 3))
    report["search_given_vector"] = _chunks(await store.search_verified(query, 3, vector=vector))
    report["wrong_vector_refused"] = await _raises(
        ValueError, store.search_verified(query, 3, vector=[0.0] * 10)
    )

    report["chunks_before_readd"] = len(await store.run_in_cognee(_all_chunks))
    await store.add_verified(CLAIMS["oncall"], source="agent-b", low_confidence=False)
    await store.add_verified(CLAIMS["oncall"], source="agent-c", low_confidence=True)
    report["chunks_after_readd"] = len(await store.run_in_cognee(_all_chunks))
    report["oncall_after_readd"] = [
        chunk
        for chunk in _chunks(await store.search_verified("When does on-call change?", 10))
        if chunk["text"] == CLAIMS["oncall"]
    ]

    report["improve"] = await store.improve()
    report["bad_input"] = {
        "blank_query": await store.search_verified("   ", 5),
        "zero_top_k": await store.search_verified("billing", 0),
        "blank_claim_refused": await _raises(
            ValueError, store.add_verified("  ", source="agent-a", low_confidence=False)
        ),
        "reserved_source_refused": await _raises(
            ValueError, store.add_verified("x", source="verified", low_confidence=False)
        ),
    }

    report["other_root_refused"] = await _raises(
        CogneeConfigError, CogneeStore(root.parent / "other-root").start()
    )
    report["other_llm_refused"] = await _raises(
        CogneeConfigError,
        CogneeStore(root, llm=LLMConfig("http://127.0.0.1:9/v1", "m")).start(),
    )
    second = CogneeStore(root)
    await second.start()
    report["second_store_top"] = (await second.search_verified("billing port", 1))[0].text
    await second.close()

    # Cognee logs recall queries at INFO: nothing of it may reach the service's handlers.
    captured: list[logging.LogRecord] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if LOGGED_QUERY in record.getMessage():
                captured.append(record)

    capture = Capture(logging.DEBUG)
    logging.getLogger().addHandler(capture)
    await store.recall_verified(LOGGED_QUERY, 2)
    await store.search_verified(LOGGED_QUERY, 2)
    logging.getLogger().removeHandler(capture)
    report["captured_records"] = len(captured)

    lags: list[float] = []
    write = asyncio.create_task(
        store.add_verified(
            "The staging cluster is rebuilt every Sunday night.",
            source="agent-c",
            low_confidence=False,
        )
    )
    while not write.done():
        began = time.perf_counter()
        await asyncio.sleep(0.01)
        lags.append(time.perf_counter() - began - 0.01)
    await write
    report["max_loop_lag"] = max(lags)
    report["timings"] = store.timings
    await store.close()
    return report


async def _add_with_raw_cognee(dataset: str, text: str) -> None:
    """A chunk in the same dataset and vector table, tagged with another node set."""
    import cognee
    from cognee.infrastructure.llm.utils import get_max_chunk_tokens
    from cognee.modules.pipelines.tasks.task import Task
    from cognee.tasks.documents import classify_documents, extract_chunks_from_documents
    from cognee.tasks.storage import add_data_points

    await cognee.add(text, dataset_name=dataset, node_set=["unverified"])
    await cognee.run_custom_pipeline(
        tasks=[
            Task(classify_documents, needs_llm=False),
            Task(
                extract_chunks_from_documents,
                max_chunk_size=await get_max_chunk_tokens(),
                needs_llm=False,
            ),
            Task(add_data_points, needs_llm=False),
        ],
        dataset=dataset,
        incremental_loading=True,
        pipeline_name="test_unverified",
    )


async def _all_chunks() -> dict[str, list[str]]:
    """Every chunk in Cognee's vector table (text -> node sets), via Cognee's own engine."""
    from cognee.infrastructure.databases.vector import get_vector_engine_async

    engine = await get_vector_engine_async()
    found = await engine.search("DocumentChunk_text", "x", limit=None, include_payload=True)
    return {r.payload["text"]: list(r.payload.get("belongs_to_set") or []) for r in found}


async def _llm_scenario(root: Path) -> dict[str, Any]:
    from aiohttp import web

    from mithril.services.memorygate.cognee_store import CogneeStore, LLMConfig

    kinds: dict[str, int] = {}
    formats: list[Any] = []

    async def chat(request: web.Request) -> web.Response:
        """The stand-in model: fixed, schema-valid answers; never a judgement."""
        body = await request.json()
        system = " ".join(
            str(m.get("content", "")) for m in body.get("messages", []) if m["role"] == "system"
        )
        if "response_format" in body:
            formats.append(body["response_format"])
        if 'the following string: "test"' in system:
            kind, answer = "connection_test", "test"
        elif '"summary"' in system:
            kind = "summary"
            answer = json.dumps({"summary": "A service and its port.\n- It listens on a port."})
        elif "knowledge graph" in system:
            kind = "graph"
            node = {"type": "Concept", "description": "Named in the text."}
            answer = json.dumps(
                {
                    "nodes": [
                        {"id": "billing service", "name": "billing service", **node},
                        {"id": "port 8443", "name": "port 8443", **node},
                    ],
                    "edges": [
                        {
                            "source_node_id": "billing service",
                            "target_node_id": "port 8443",
                            "relationship_name": "listens_on",
                        }
                    ],
                }
            )
        else:
            kind, answer = "other", "{}"
        kinds[kind] = kinds.get(kind, 0) + 1
        return web.json_response(
            {
                "id": "chatcmpl-stand-in",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "stand-in"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    store = CogneeStore(
        root, llm=LLMConfig(f"http://127.0.0.1:{port}/v1", "stand-in-model", "stand-in-key")
    )
    try:
        await store.start()
        await store.add_verified(LLM_CLAIM, source="agent-a", low_confidence=False)
        results = await store.search_verified("billing service port", 3)
        await store.close()
    finally:
        await runner.cleanup()
    return {
        "request_kinds": kinds,
        "response_formats": formats,
        "top_text": results[0].text if results else None,
        "top_node_sets": list(results[0].node_sets) if results else [],
        "timings": store.timings,
    }


if __name__ == "__main__":
    scenario, scenario_root = sys.argv[1], Path(sys.argv[2])
    run = {"no-llm": _no_llm_scenario, "llm": _llm_scenario}[scenario]
    print(json.dumps(asyncio.run(run(scenario_root))), flush=True)
