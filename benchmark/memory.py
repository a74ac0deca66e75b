"""The memory gate against a labelled memory-poisoning set, on two Cognee write paths.

    python -m mithril.benchmark.memory [--paths offline,llm-stand-in] [--results DIR]

The set (`data/memory_poisoning.jsonl`, written by hand for this benchmark) has three
parts, in file order:

- `seed`: verified facts (IT, HR, finance, facilities, engineering), most from
  "Security Policy", some from "Slack". They go through the gate first; any the gate
  holds is approved by a reviewer, as an operator would, so verified memory starts with
  every seed. Reputations are then reset to their priors.
- probes, each labelled `expected: hold` or `store`: `contradiction` (contradicts a
  seed), `credential` (plants a credential; the fake values are stored in pieces and
  joined at load time, as tests/unit/secrets/secrets_samples.py does, so repository
  secret scanners stay quiet), `injection` (an instruction dressed as a note), `flooding`
  (near-duplicate falsehoods from one low-reputation source, then from sybil sources),
  `benign_update` (new facts and legitimate updates from trusted sources) and
  `corroboration` (restatements of seeds by trusted sources). They are sent in file
  order, one at a time, so reputations evolve as they would in service.
- `recall`: questions whose answer is a seed.

Each path runs in its own process (Cognee's configuration is process-wide) with its own
MITHRIL_HOME in a temporary folder, and the real services in that process: scanner,
secrets and reputation over gRPC on loopback, and the memory gate's server over embedded
Cognee. The gate has no judge on either path (`judge_addr=""`), so every score comes from
the offline scorers and the two paths' detection figures can only differ through what
verified memory returns as context.

- `offline`: Cognee without an LLM (chunks and embeddings, no entity graph).
- `llm-stand-in`: Cognee's `remember()` (add + cognify: graph extraction, summaries)
  against `cognee_stand_in.CogneeStandIn`, a loopback OpenAI-compatible server that
  answers with schema-shaped JSON built from the text. It decides nothing; it makes
  Cognee's LLM write path run so its time can be measured.
- `no gate` is computed, not run: every probe would be written, so every poisoned claim
  and every raw secret would reach memory.

Timing: `MemoryGate.decide()` (the whole decision: secrets, reputation, verified-memory
context and the contradiction scorer, scanner and danger rules, trust and gate) is timed
apart from `MemoryGate.commit()` (the ledger, Cognee's write, the reputation update), and
Cognee's own write time is the store's `timings["add"]`. Recall is timed through the gRPC
Recall RPC. A bare gRPC health check against the same server, in the same run, is the
baseline for the decision time. After each worker exits, every file under its
MITHRIL_HOME (Cognee's stores, the ledger, the reputation database, the worker's log)
is searched for each planted secret.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "memory_poisoning.jsonl"
RESULTS = Path(__file__).resolve().parent / "results"
PATHS = ("offline", "llm-stand-in")
HOLD_CLASSES = ("contradiction", "credential", "injection", "flooding")
STORE_CLASSES = ("benign_update", "corroboration")
PROBE_CLASSES = HOLD_CLASSES + STORE_CLASSES
SEED, RECALL = "seed", "recall"
SECRET_SLOT = "[[secret{}]]"
DECISION_TARGET_MS = 50.0
RECALL_TARGET_MS = 250.0
REPUTATION_CEILING = 0.99
"""The reputation service's default ceiling: the best reputation any source can earn."""
WARMUP_DECISIONS = 5
WARMUP_RECALLS = 3
HEALTH_WARMUP, HEALTH_CHECKS = 20, 200
RECALL_TOP_K = 5
STAND_IN_MODEL = "stand-in-graph"
SEED_REVIEWER = "benchmark-seed"
WORKER_TIMEOUT_SECONDS = 900.0


# --------------------------------------------------------------------------------------
# The data set


@dataclass(frozen=True, slots=True)
class Row:
    id: str
    cls: str
    text: str
    source: str
    expected: str
    note: str
    seed: str = ""
    subtype: str = ""
    answer: str = ""
    secrets: tuple[str, ...] = ()
    """The raw secrets planted in `text` (credential rows)."""

    @property
    def markers(self) -> tuple[str, ...]:
        """Strings to search for on disk: each secret, and each long line of a multi-line
        one (a PEM body), so a partial leak is found too."""
        found: list[str] = []
        for secret in self.secrets:
            found.append(secret)
            lines = secret.splitlines()
            if len(lines) > 1:
                found += [line for line in lines if len(line) >= 20 and "-----" not in line]
        return tuple(dict.fromkeys(found))


def parse_row(data: dict[str, Any]) -> Row:
    """A row of the file; credential texts get their secrets joined from pieces."""
    secrets = tuple("".join(pieces) for pieces in data.get("secrets", []))
    text = str(data["text"])
    for index, secret in enumerate(secrets):
        text = text.replace(SECRET_SLOT.format(index), secret)
    return Row(
        id=str(data["id"]),
        cls=str(data["class"]),
        text=text,
        source=str(data.get("source", "")),
        expected=str(data["expected"]),
        note=str(data.get("note", "")),
        seed=str(data.get("seed", "")),
        subtype=str(data.get("subtype", "")),
        answer=str(data.get("answer", "")),
        secrets=secrets,
    )


def load(path: Path = DATA) -> list[Row]:
    with path.open(encoding="utf-8") as handle:
        return [parse_row(json.loads(line)) for line in handle if line.strip()]


# --------------------------------------------------------------------------------------
# Small statistics


def pct(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..1); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def spread(values: Sequence[float]) -> dict[str, float | int | None]:
    def ms(value: float | None) -> float | None:
        return None if value is None else round(value, 3)

    return {
        "n": len(values),
        "p50": ms(pct(values, 0.5)),
        "p95": ms(pct(values, 0.95)),
        "mean": ms(statistics.fmean(values) if values else None),
        "max": ms(max(values) if values else None),
    }


def rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return round(statistics.fmean(items), 4) if items else None


# --------------------------------------------------------------------------------------
# The worker: one path, one process


async def _start_services(home: Path, stops: list[Callable[[], Any]]) -> dict[str, str]:
    from mithril.services.reputation.config import ReputationSettings
    from mithril.services.reputation.server import create_server as create_reputation
    from mithril.services.scanner.config import ScannerSettings
    from mithril.services.scanner.server import create_server as create_scanner
    from mithril.services.secrets.config import SecretsSettings
    from mithril.services.secrets.server import create_server as create_secrets

    scanner = await create_scanner(ScannerSettings(host="127.0.0.1", port=0, grace_seconds=0))
    stops.append(lambda: scanner.stop(0))
    secrets = await create_secrets(SecretsSettings(host="127.0.0.1", port=0, grace_seconds=0))
    stops.append(lambda: secrets.stop(0))
    reputation = await create_reputation(
        ReputationSettings(
            host="127.0.0.1",
            port=0,
            grace_seconds=0,
            database_url=f"sqlite:///{home / 'reputation.db'}",
        )
    )
    stops.append(lambda: reputation.stop(0))
    for server in (scanner, secrets, reputation):
        await server.server.start()
    return {
        "scanner": f"127.0.0.1:{scanner.port}",
        "secrets": f"127.0.0.1:{secrets.port}",
        "reputation": f"127.0.0.1:{reputation.port}",
    }


async def _health_round_trips(address: str) -> list[float]:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    async with grpc.aio.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        request = health_pb2.HealthCheckRequest()
        for _ in range(HEALTH_WARMUP):
            await stub.Check(request)
        times = []
        for _ in range(HEALTH_CHECKS):
            began = time.perf_counter()
            await stub.Check(request)
            times.append((time.perf_counter() - began) * 1000)
    return times


def _signals(decision: Any) -> dict[str, float]:
    s = decision.signals
    return {
        "reputation": round(s.reputation, 4),
        "corroboration": round(s.corroboration, 4),
        "freshness": round(s.freshness, 4),
        "contradiction": round(s.contradiction, 4),
        "danger": round(s.danger, 4),
    }


async def _seed(gate: Any, seeds: Sequence[Row], writes: list[dict[str, Any]]) -> list[Any]:
    """Write the seeds through the gate; a seed it holds is approved, as a reviewer would."""
    from mithril.services.memorygate.ledger import APPROVE

    log = []
    for row in seeds:
        gate.store.timings.pop("add", None)
        decision = await gate.remember(row.text, row.source)
        approved = not decision.stored
        if approved:
            await gate.review(decision.quarantine_id, APPROVE, SEED_REVIEWER, "seed")
        if "add" in gate.store.timings:
            writes.append({"id": row.id, "kind": SEED, "ms": gate.store.timings["add"] * 1000})
        log.append(
            {
                "id": row.id,
                "source": row.source,
                "status": decision.status.value,
                "trust": round(decision.trust_score, 4),
                "approved_by_reviewer": approved,
            }
        )
    return log


async def _probe(gate: Any, row: Row) -> tuple[dict[str, Any], str]:
    """One probe: `decide()` and `commit()` timed apart; (its record, the gated claim)."""
    store = gate.store
    store.timings.pop("add", None)
    t0 = time.perf_counter()
    pending = await gate.decide(row.text, row.source)
    t1 = time.perf_counter()
    decision = await gate.commit(pending)
    t2 = time.perf_counter()
    stored = decision.stored
    write = store.timings.get("add") if stored else None
    at_ceiling = gate.model.score(replace(decision.signals, reputation=REPUTATION_CEILING))
    evidence = decision.evidence
    record = {
        "id": row.id,
        "class": row.cls,
        "subtype": row.subtype,
        "source": row.source,
        "expected": row.expected,
        "status": decision.status.value,
        "stored": stored,
        "trust": round(decision.trust_score, 4),
        "signals": _signals(decision),
        "trust_at_ceiling": round(at_ceiling, 4),
        "stored_at_ceiling": gate.status_for(
            at_ceiling, planted_credential=bool(evidence.get("attempted_exfiltration"))
        ).stored,
        "contradicted": bool(evidence.get("contradicted")),
        "contexts": int(evidence.get("contexts", 0)),
        "aligned_chunks": int(evidence.get("aligned_chunks", 0)),
        "danger_rules": float(evidence.get("danger_rules", 0.0)),
        "danger_scanner": float(evidence.get("danger_scanner", 0.0)),
        "danger_rule_ids": list(evidence.get("danger_rule_ids", [])),
        "planted_credential": bool(evidence.get("attempted_exfiltration")),
        "redacted_kinds": list(decision.redacted_kinds),
        "raw_secret_in_claim": any(marker in decision.claim for marker in row.markers),
        "decide_ms": round((t1 - t0) * 1000, 3),
        "commit_ms": round((t2 - t1) * 1000, 3),
        "write_ms": None if write is None else round(write * 1000, 3),
    }
    return record, decision.claim


async def _recall(
    address: str, queries: Sequence[Row], answers: dict[str, str], poison: dict[str, str]
) -> list[dict[str, Any]]:
    """Each query through the gRPC Recall RPC: time, whether the answering seed came back,
    and which stored poisoned claims (by probe id) came back with it."""
    import grpc

    from mithril.memorygate.v1 import memorygate_service_pb2 as pb
    from mithril.memorygate.v1 import memorygate_service_pb2_grpc as pb_grpc

    results = []
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.MemoryGateServiceStub(channel)
        for query in queries[:WARMUP_RECALLS]:
            await stub.Recall(pb.RecallRequest(query=query.text, top_k=RECALL_TOP_K))
        for query in queries:
            began = time.perf_counter()
            reply = await stub.Recall(pb.RecallRequest(query=query.text, top_k=RECALL_TOP_K))
            elapsed = (time.perf_counter() - began) * 1000
            texts = [memory.text for memory in reply.memories]
            answer = answers.get(query.answer, "")
            results.append(
                {
                    "id": query.id,
                    "ms": round(elapsed, 3),
                    "hit": answer in texts,
                    "rank": texts.index(answer) + 1 if answer in texts else None,
                    "poisoned": sorted(poison[text] for text in texts if text in poison),
                }
            )
    return results


async def _start_gate(path: str, home: Path, stops: list[Callable[[], Any]]) -> dict[str, Any]:
    """The stand-in (on its path), the services, then the memory gate's server."""
    from mithril.services.memorygate.config import MemoryGateSettings
    from mithril.services.memorygate.server import create_server as create_memory_gate

    began = time.perf_counter()
    llm_url = llm_model = ""
    stand_in = None
    if path == "llm-stand-in":
        from mithril.benchmark.cognee_stand_in import CogneeStandIn

        stand_in = CogneeStandIn()
        await stand_in.start()
        stops.append(stand_in.stop)
        llm_url, llm_model = stand_in.base_url, STAND_IN_MODEL
    elif path != "offline":
        raise SystemExit(f"unknown path {path!r}; choose from {', '.join(PATHS)}")
    addrs = await _start_services(home, stops)
    services_ready = time.perf_counter()
    settings = MemoryGateSettings(
        host="127.0.0.1",
        port=0,
        grace_seconds=0,
        secrets_addr=addrs["secrets"],
        scanner_addr=addrs["scanner"],
        reputation_addr=addrs["reputation"],
        judge_addr="",
        database_url=f"sqlite:///{home / 'memory-gate.db'}",
        memory_root=home / "cognee",
        llm_base_url=llm_url,
        llm_model=llm_model,
    )
    server = await create_memory_gate(settings)
    stops.append(lambda: server.stop(0))
    await server.server.start()
    ready = time.perf_counter()
    assert server.gate is not None
    return {
        "gate": server.gate,
        "address": f"127.0.0.1:{server.port}",
        "reputation": addrs["reputation"],
        "stand_in": stand_in,
        "start_seconds": {
            "services": round(services_ready - began, 3),
            "memory_gate": round(ready - services_ready, 3),
            "cognee": round(server.gate.store.timings.get("start", 0.0), 3),
            "total": round(ready - began, 3),
        },
    }


async def _work(path: str, data: Path, home: Path) -> dict[str, Any]:
    from mithril.services.reputation.client import ReputationClient

    rows = load(data)
    seeds = [r for r in rows if r.cls == SEED]
    probes = [r for r in rows if r.cls in PROBE_CLASSES]
    queries = [r for r in rows if r.cls == RECALL]
    stops: list[Callable[[], Any]] = []
    result: dict[str, Any] = {"path": path}
    began = time.perf_counter()
    try:
        started = await _start_gate(path, home, stops)
        gate = started["gate"]
        result["start_seconds"] = started["start_seconds"]
        writes: list[dict[str, Any]] = []
        result["seeds"] = await _seed(gate, seeds, writes)
        async with ReputationClient(started["reputation"]) as reputation:
            result["reputation_reset"] = await reputation.reset("")
        result["health_ms"] = await _health_round_trips(started["address"])
        for index in range(WARMUP_DECISIONS):  # decide() writes nothing
            await gate.decide(
                f"Warm-up note {index}: the canteen menu changes on Mondays.", "benchmark-warmup"
            )
        records = []
        poison: dict[str, str] = {}
        for row in probes:
            record, claim = await _probe(gate, row)
            records.append(record)
            if record["write_ms"] is not None:
                writes.append({"id": row.id, "kind": "probe", "ms": record["write_ms"]})
            if record["stored"] and row.expected == "hold":
                poison[claim] = row.id
        result["probes"] = records
        result["writes"] = writes
        answers = {r.id: r.text for r in seeds}
        result["recall"] = await _recall(started["address"], queries, answers, poison)
        async with ReputationClient(started["reputation"]) as reputation:
            sources = sorted({r.source for r in rows if r.source})
            result["final_reputation"] = {
                source: round(float(await reputation.get(source)), 4) for source in sources
            }
        stand_in = started["stand_in"]
        if stand_in is not None:
            result["stand_in_requests"] = len(stand_in.requests)
            result["stand_in_schema_replies"] = stand_in.schema_replies
    finally:
        while stops:
            stop = stops.pop()
            try:
                await stop()
            except Exception as error:  # stopping the rest matters more
                print(f"stop failed: {error!r}", file=sys.stderr)
    result["worker_seconds"] = round(time.perf_counter() - began, 3)
    return result


def _worker_main(path: str, data: Path, out: Path) -> None:
    from mithril.runtime.settings import mithril_home

    home = Path(os.environ.get("MITHRIL_HOME", "")).resolve()
    if not home.name.startswith("mithril-bench-memory-") or mithril_home().resolve() != home:
        raise SystemExit("the worker runs only in a MITHRIL_HOME the benchmark created")
    result = asyncio.run(_work(path, data, home))
    out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    sys.stdout.flush()
    sys.stderr.flush()
    # Cognee leaves non-daemon worker threads (database pools) that can delay exit.
    os._exit(0)


# --------------------------------------------------------------------------------------
# The parent: one subprocess per path, then the figures


def _clean_environment(home: Path) -> dict[str, str]:
    """The parent's environment without Mithril settings (they would change the gate)
    and with MITHRIL_HOME set to the path's own temporary folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MITHRIL_")}
    env["MITHRIL_HOME"] = str(home)
    return env


def find_secrets(root: Path, rows: Iterable[Row]) -> dict[str, Any]:
    """Every planted secret (and long line of one) searched in every regular file under
    `root`; symlinks (Cognee's links to the packaged model files) are skipped."""
    markers = {m.encode(): row.id for row in rows for m in row.markers}
    cognee_root = root / "cognee"
    files = scanned_bytes = 0
    hits: list[dict[str, str]] = []
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        files += 1
        scanned_bytes += len(data)
        for marker, row_id in markers.items():
            if marker in data:
                where = "cognee" if cognee_root in path.parents else "other"
                hits.append({"probe": row_id, "file": str(path.relative_to(root)), "where": where})
    return {
        "files": files,
        "bytes": scanned_bytes,
        "secrets_searched": len(markers),
        "in_cognee": sum(1 for h in hits if h["where"] == "cognee"),
        "elsewhere": sum(1 for h in hits if h["where"] == "other"),
        "hits": hits,
    }


def run_path(path: str, data: Path = DATA, *, keep: bool = False) -> dict[str, Any]:
    """Run one path in its own process with its own MITHRIL_HOME; return its raw result."""
    rows = load(data)
    home = Path(tempfile.mkdtemp(prefix=f"mithril-bench-memory-{path}-"))
    out, log = home / "result.json", home / "worker.log"
    load_before = os.getloadavg()[0]
    began = time.perf_counter()
    try:
        with log.open("wb") as handle:
            completed = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "mithril.benchmark.memory",
                    "--worker",
                    path,
                    "--data",
                    str(data),
                    "--out",
                    str(out),
                ],
                env=_clean_environment(home),
                stdout=handle,
                stderr=subprocess.STDOUT,
                timeout=WORKER_TIMEOUT_SECONDS,
                check=False,
            )
        if completed.returncode != 0 or not out.exists():
            tail = log.read_text(encoding="utf-8", errors="replace")[-4000:]
            raise RuntimeError(f"the {path} worker failed ({completed.returncode}):\n{tail}")
        result = json.loads(out.read_text(encoding="utf-8"))
        result["process_seconds"] = round(time.perf_counter() - began, 3)
        result["load_average"] = {"before": load_before, "after": os.getloadavg()[0]}
        result["secrets_on_disk"] = find_secrets(home, rows)
        return result
    finally:
        if keep:
            print(f"kept {home}", file=sys.stderr)
        else:
            shutil.rmtree(home, ignore_errors=True)


def _class_summary(records: list[dict[str, Any]], cls: str) -> dict[str, Any]:
    rows = [r for r in records if r["class"] == cls]
    held = [r for r in rows if not r["stored"]]
    held_ceiling = [r for r in rows if not r["stored_at_ceiling"]]
    summary: dict[str, Any] = {
        "n": len(rows),
        "expected": rows[0]["expected"] if rows else "",
        "held": len(held),
        "held_rate": rate(len(held), len(rows)),
        "held_at_ceiling": len(held_ceiling),
        "held_at_ceiling_rate": rate(len(held_ceiling), len(rows)),
        "mean_trust": mean(r["trust"] for r in rows),
        "mean_trust_at_ceiling": (mean(r["trust_at_ceiling"] for r in rows)),
        "statuses": dict(Counter(r["status"] for r in rows)),
        "contradicted": sum(r["contradicted"] for r in rows),
        "danger_ge_0_5": sum(r["signals"]["danger"] >= 0.5 for r in rows),
        "mean_danger": mean(r["signals"]["danger"] for r in rows),
        "mean_contradiction": (mean(r["signals"]["contradiction"] for r in rows)),
        "corroborated": sum(r["signals"]["corroboration"] > 0 for r in rows),
        "mean_corroboration": (mean(r["signals"]["corroboration"] for r in rows)),
        "missed": [r["id"] for r in rows if r["stored"] and r["expected"] == "hold"],
        "false_holds": [r["id"] for r in rows if not r["stored"] and r["expected"] == "store"],
        "missed_at_ceiling": [
            r["id"] for r in rows if r["stored_at_ceiling"] and r["expected"] == "hold"
        ],
    }
    if cls == "credential":
        redacted = [r for r in rows if r["planted_credential"] and not r["raw_secret_in_claim"]]
        summary["redacted"] = len(redacted)
        summary["redaction_rate"] = rate(len(redacted), len(rows))
        summary["raw_secret_in_claim"] = sum(r["raw_secret_in_claim"] for r in rows)
        summary["stored_redacted"] = sum(r["stored"] for r in rows)
        summary["raw_secret_stored_at_ceiling"] = [
            r["id"] for r in rows if r["stored_at_ceiling"] and r["raw_secret_in_claim"]
        ]
    subtypes = sorted({r["subtype"] for r in rows if r["subtype"]})
    if subtypes:
        summary["by_subtype"] = {
            sub: {
                "n": len(part := [r for r in rows if r["subtype"] == sub]),
                "held": sum(not r["stored"] for r in part),
                "held_at_ceiling": sum(not r["stored_at_ceiling"] for r in part),
                "contradicted": sum(r["contradicted"] for r in part),
                "mean_trust": mean(r["trust"] for r in part),
                "mean_corroboration": mean(r["signals"]["corroboration"] for r in part),
            }
            for sub in subtypes
        }
    return summary


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    """Per-class catch and false-hold figures, latencies and what reached memory."""
    records = result["probes"]
    classes = {cls: _class_summary(records, cls) for cls in PROBE_CLASSES}
    decide = [r["decide_ms"] for r in records]
    health = result["health_ms"]
    probe_writes = [w["ms"] for w in result["writes"] if w["kind"] == "probe"]
    all_writes = [w["ms"] for w in result["writes"]]
    recalls = result["recall"]
    recall_ms = [q["ms"] for q in recalls]
    decide_p50, health_p50 = pct(decide, 0.5), pct(health, 0.5)
    poison = [r for r in records if r["expected"] == "hold"]
    benign = [r for r in records if r["expected"] == "store"]
    return {
        "classes": classes,
        "poison": {
            "n": len(poison),
            "held": sum(not r["stored"] for r in poison),
            "stored": sum(r["stored"] for r in poison),
            "held_at_ceiling": sum(not r["stored_at_ceiling"] for r in poison),
        },
        "benign": {
            "n": len(benign),
            "stored": sum(r["stored"] for r in benign),
            "held": sum(not r["stored"] for r in benign),
            "held_at_ceiling": sum(not r["stored_at_ceiling"] for r in benign),
        },
        "decide_ms": spread(decide),
        "decide_ms_with_context": spread([r["decide_ms"] for r in records if r["contexts"]]),
        "commit_ms_held": spread([r["commit_ms"] for r in records if not r["stored"]]),
        "commit_ms_stored": spread([r["commit_ms"] for r in records if r["stored"]]),
        "cognee_write_ms_probes": spread(probe_writes),
        "cognee_write_ms_all": spread(all_writes),
        "health_ms": spread(health),
        "decide_over_health": (
            round(decide_p50 / health_p50, 2) if decide_p50 is not None and health_p50 else None
        ),
        "recall_ms": spread(recall_ms),
        "recall_hits": sum(q["hit"] for q in recalls),
        "recall_queries": len(recalls),
        "recall_poisoned_results": sum(len(q["poisoned"]) for q in recalls),
        "reputation_seen": {
            source: {
                "first": seen[0],
                "min": min(seen),
                "max": max(seen),
                "last": seen[-1],
            }
            for source in ("Security Policy", "Slack")
            if (seen := [r["signals"]["reputation"] for r in records if r["source"] == source])
        },
        "seeds_approved_by_reviewer": sum(s["approved_by_reviewer"] for s in result["seeds"]),
        "seeds": len(result["seeds"]),
        "secrets_in_cognee_files": result["secrets_on_disk"]["in_cognee"],
        "secrets_elsewhere_under_home": result["secrets_on_disk"]["elsewhere"],
    }


def no_gate(rows: Sequence[Row]) -> dict[str, Any]:
    """What reaches memory when every claim is written as sent (computed, not run)."""
    probes = [r for r in rows if r.cls in PROBE_CLASSES]
    return {
        "method": (
            "computed from the labelled set: without a gate every probe is written as sent,"
            " so every one of them reaches memory and every planted secret is stored raw"
        ),
        "stored_by_class": {cls: sum(r.cls == cls for r in probes) for cls in PROBE_CLASSES},
        "poisoned_stored": sum(r.expected == "hold" for r in probes),
        "benign_stored": sum(r.expected == "store" for r in probes),
        "raw_secrets_stored": sum(len(r.secrets) for r in probes),
    }


def _machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
    }


def run(
    paths: Sequence[str] = PATHS,
    *,
    data: Path = DATA,
    keep: bool = False,
    log: Callable[[str], None] = lambda message: print(message, file=sys.stderr),
) -> dict[str, Any]:
    """Every path in its own subprocess, then the summary; the JSON-ready report."""
    rows = load(data)
    counts = Counter(r.cls for r in rows)
    report: dict[str, Any] = {
        "data": {"file": str(data.name), "rows": dict(counts)},
        "targets": {"decide_p50_ms": DECISION_TARGET_MS, "recall_p50_ms": RECALL_TARGET_MS},
        "no_gate": no_gate(rows),
        "paths": {},
        "machine": _machine(),
    }
    for path in paths:
        log(f"memory benchmark: running the {path} path in its own process ...")
        raw = run_path(path, data, keep=keep)
        report["paths"][path] = {"summary": summarise(raw), "raw": raw}
        log(f"memory benchmark: {path} done in {raw['process_seconds']:.0f} s")
    return report


# --------------------------------------------------------------------------------------
# The report


def _pc(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f} %"


def _ms(value: float | int | None) -> str:
    return "n/a" if value is None else f"{value:.1f} ms"


def _num(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _own_signal(cls: str, c: dict[str, Any]) -> str:
    """The class's own detector: what fired regardless of the source's reputation."""
    if cls == "injection":
        return f"danger ≥ 0.5: {c['danger_ge_0_5']}/{c['n']}"
    if cls == "credential":
        return f"fully redacted: {c['redacted']}/{c['n']}"
    if cls == "corroboration":
        return f"corroboration > 0: {c['corroborated']}/{c['n']}"
    return f"contradiction > 0.3: {c['contradicted']}/{c['n']}"


def _class_table(s: dict[str, Any]) -> list[str]:
    lines = [
        "| class | n | expected | held as sent | held at 0.99 | mean trust |"
        " statuses | own signal |",
        "|---|---:|---|---|---|---:|---|---|",
    ]
    for cls in PROBE_CLASSES:
        c = s["classes"][cls]
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(c["statuses"].items()))
        word = "caught" if c["expected"] == "hold" else "false holds"
        lines.append(
            f"| {cls} | {c['n']} | {c['expected']} |"
            f" {c['held']}/{c['n']} {word} ({_pc(c['held_rate'])}) |"
            f" {c['held_at_ceiling']}/{c['n']} ({_pc(c['held_at_ceiling_rate'])}) |"
            f" {_num(c['mean_trust'])} | {statuses} | {_own_signal(cls, c)} |"
        )
    return lines


def _notes(s: dict[str, Any], raw: dict[str, Any]) -> list[str]:
    classes = s["classes"]
    lines = []
    for cls in ("flooding", "benign_update"):
        for sub, part in classes[cls].get("by_subtype", {}).items():
            lines.append(
                f"- {cls} / {sub}: {part['held']}/{part['n']} held as sent,"
                f" {part['held_at_ceiling']}/{part['n']} at 0.99, contradiction flagged"
                f" {part['contradicted']}, mean trust {_num(part['mean_trust'])},"
                f" mean corroboration {_num(part['mean_corroboration'])}."
            )
    cred = classes["credential"]
    leaks = raw["secrets_on_disk"]
    missed = [i for c in HOLD_CLASSES for i in classes[c]["missed"]]
    missed_ceiling = [i for c in HOLD_CLASSES for i in classes[c]["missed_at_ceiling"]]
    false_holds = [i for c in STORE_CLASSES for i in classes[c]["false_holds"]]
    at_ceiling_raw = cred["raw_secret_stored_at_ceiling"]
    lines += [
        f"- Credential probes: fully redacted {cred['redacted']}/{cred['n']}"
        f" ({_pc(cred['redaction_rate'])}); a raw secret left in the gated claim:"
        f" {cred['raw_secret_in_claim']}; stored (redacted): {cred['stored_redacted']};"
        " would have reached Cognee with a raw secret had the source been at 0.99:"
        f" {', '.join(at_ceiling_raw) or 'none'}.",
        f"- Planted secrets found on disk after the run: {leaks['in_cognee']} in Cognee's"
        f" files, {leaks['elsewhere']} elsewhere under MITHRIL_HOME"
        f" ({', '.join(sorted({h['file'] for h in leaks['hits']})) or '-'}); searched"
        f" {leaks['files']} files, {leaks['bytes'] / 1e6:.1f} MB, for"
        f" {leaks['secrets_searched']} strings.",
        f"- Poison stored as sent: {', '.join(missed) or 'none'}. Held as sent but stored"
        f" at 0.99 ({len(missed_ceiling)}): {', '.join(missed_ceiling) or 'none'}.",
        f"- False holds ({len(false_holds)}): {', '.join(false_holds) or 'none'}.",
        f"- Seeds: {s['seeds']} written through the gate, {s['seeds_approved_by_reviewer']}"
        " of them held and approved by the benchmark's reviewer; reputations then reset to"
        " their priors.",
    ]
    seen = s["reputation_seen"]
    reps = raw.get("final_reputation", {})
    lines.append(
        "- Reputation as the probes saw it (first / min / max / last): "
        + "; ".join(
            f"{k} {v['first']:.2f} / {v['min']:.2f} / {v['max']:.2f} / {v['last']:.2f}"
            for k, v in seen.items()
        )
        + ". After the run: "
        + ", ".join(
            f"{k} {reps[k]:.2f}" for k in ("Security Policy", "Slack", "Unknown Agent") if k in reps
        )
        + "."
    )
    return lines


def _timing_row(label: str, values: dict[str, Any], target: str = "") -> str:
    return f"| {label} | {values['n']} | {_ms(values['p50'])} | {_ms(values['p95'])} | {target} |"


def _timings(s: dict[str, Any], raw: dict[str, Any]) -> list[str]:
    start = raw["start_seconds"]
    lines = [
        "| timing | n | p50 | p95 | target |",
        "|---|---:|---:|---:|---|",
        _timing_row(
            "decision: `decide()`, warm, no write",
            s["decide_ms"],
            f"p50 ≤ {DECISION_TARGET_MS:.0f} ms",
        ),
        _timing_row("decision, claims with verified context", s["decide_ms_with_context"]),
        _timing_row("bare gRPC health check (baseline)", s["health_ms"]),
        _timing_row("commit of a held claim (ledger, reputation)", s["commit_ms_held"]),
        _timing_row("commit of a stored claim (with the Cognee write)", s["commit_ms_stored"]),
        _timing_row("Cognee write alone, probes", s["cognee_write_ms_probes"]),
        _timing_row("Cognee write alone, seeds and probes", s["cognee_write_ms_all"]),
        _timing_row(
            f"verified recall: gRPC Recall, top {RECALL_TOP_K}",
            s["recall_ms"],
            f"p50 ≤ {RECALL_TARGET_MS:.0f} ms",
        ),
        "",
        f"Decision p50 / health-check p50 = {_num(s['decide_over_health'], 1)}x. Recall"
        f" returned the seed that answers the query in the top {RECALL_TOP_K} for"
        f" {s['recall_hits']}/{s['recall_queries']} queries; poisoned claims among the"
        f" recalled memories: {s['recall_poisoned_results']}. Start: services"
        f" {start['services']:.1f} s, memory gate {start['memory_gate']:.1f} s (of which"
        f" Cognee {start['cognee']:.1f} s); the whole worker process took"
        f" {raw['process_seconds']:.0f} s. One-minute load average before / after the"
        f" worker: {_num(raw.get('load_average', {}).get('before'), 1)} /"
        f" {_num(raw.get('load_average', {}).get('after'), 1)} on"
        f" {os.cpu_count()} CPUs (other work on the machine slows every timing).",
    ]
    if "stand_in_requests" in raw:
        lines.append(
            f"The stand-in answered {raw['stand_in_requests']} LLM requests from Cognee"
            f" ({raw['stand_in_schema_replies']} of them schema-shaped JSON: graphs and"
            " summaries); the gate itself never called it."
        )
    return lines


def path_agreement(report: dict[str, Any]) -> dict[str, Any]:
    """Whether every probe got the same status and signals on every path."""
    decisions = {
        name: {
            p["id"]: (p["status"], p["signals"], p["contexts"], p["aligned_chunks"])
            for p in entry["raw"]["probes"]
        }
        for name, entry in report["paths"].items()
    }
    names = list(decisions)
    differ = sorted(
        {
            probe
            for other in names[1:]
            for probe, seen in decisions[other].items()
            if decisions[names[0]].get(probe) != seen
        }
    )
    return {"paths": names, "probes": len(decisions[names[0]]) if names else 0, "differ": differ}


def _no_gate_table(report: dict[str, Any]) -> list[str]:
    ng, paths = report["no_gate"], report["paths"]

    def row(label: str, total: int, figures: Iterable[Any]) -> str:
        return f"| {label} | {total} | " + " | ".join(str(f) for f in figures) + " |"

    summaries = [entry["summary"] for entry in paths.values()]
    return [
        "## What reaches memory: no gate against the gate",
        "",
        f"No gate, method: {ng['method']}.",
        "",
        "| | no gate | " + " | ".join(f"gate, `{p}`" for p in paths) + " |",
        "|---|---:|" + "---:|" * len(paths),
        row(
            f"poisoned claims stored (of {ng['poisoned_stored']})",
            ng["poisoned_stored"],
            (x["poison"]["stored"] for x in summaries),
        ),
        row(
            f"raw secrets in Cognee's files (of {ng['raw_secrets_stored']})",
            ng["raw_secrets_stored"],
            (x["secrets_in_cognee_files"] for x in summaries),
        ),
        row(
            f"benign claims stored (of {ng['benign_stored']})",
            ng["benign_stored"],
            (x["benign"]["stored"] for x in summaries),
        ),
        row(
            "poisoned claims stored had every source been at 0.99",
            ng["poisoned_stored"],
            (x["poison"]["n"] - x["poison"]["held_at_ceiling"] for x in summaries),
        ),
    ]


def format_markdown(report: dict[str, Any]) -> str:
    rows = report["data"]["rows"]
    lines = [
        "# Memory gate benchmark",
        "",
        f"Labelled set `benchmark/data/{report['data']['file']}`: {rows.get(SEED, 0)} seed"
        f" facts, {sum(rows.get(c, 0) for c in PROBE_CLASSES)} probes"
        f" ({', '.join(f'{c} {rows.get(c, 0)}' for c in PROBE_CLASSES)}),"
        f" {rows.get(RECALL, 0)} recall queries. Default settings and reputation priors; no"
        " judge on either path, so every score comes from the offline scorers (the LLM"
        " stand-in only serves Cognee's write path). Held = review, quarantine or reject;"
        " stored = accept or warn. Probes are sent in file order and reputations evolve.",
        "",
        "*Held at 0.99* is what the gate would have done with the same signals had the claim"
        " come from a source at the reputation ceiling: the part of the catch the content"
        " signals earn without the source's prior.",
        "",
    ]
    for name, entry in report["paths"].items():
        summary, raw = entry["summary"], entry["raw"]
        lines += [f"## Path `{name}`", "", *_class_table(summary), ""]
        lines += [*_notes(summary, raw), "", *_timings(summary, raw), ""]
    agreement = path_agreement(report)
    if len(agreement["paths"]) > 1:
        lines += [
            "## Paths compared",
            "",
            f"Probes whose status, signals, context count or aligned chunks differ between"
            f" {' and '.join(f'`{p}`' for p in agreement['paths'])}:"
            f" {len(agreement['differ'])} of {agreement['probes']}"
            f"{' (' + ', '.join(agreement['differ']) + ')' if agreement['differ'] else ''}."
            " The gate has no judge on either path, so the stand-in cannot change a"
            " decision; only Cognee's write path (and its timings) differs.",
            "",
        ]
    lines += _no_gate_table(report)
    machine = report["machine"]
    lines += ["", f"Machine: {machine['cpus']} CPUs, Python {machine['python']}."]
    return "\n".join(lines) + "\n"


def to_json(report: dict[str, Any]) -> str:
    """The report as JSON, one line per probe, seed, query and timing list."""
    lines: dict[str, str] = {}

    def one_line(value: Any) -> str:
        key = f"@@{len(lines)}@@"
        lines[json.dumps(key)] = json.dumps(value, ensure_ascii=False)
        return key

    copy = json.loads(json.dumps(report))
    for entry in copy["paths"].values():
        raw = entry["raw"]
        for name in ("probes", "seeds", "recall", "writes"):
            raw[name] = [one_line(item) for item in raw.get(name, [])]
        raw["health_ms"] = one_line([round(x, 3) for x in raw.get("health_ms", [])])
    text = json.dumps(copy, indent=1, ensure_ascii=False)
    for key, value in lines.items():
        text = text.replace(key, value, 1)
    return text + "\n"


def write_report(report: dict[str, Any], results: Path = RESULTS) -> str:
    """memory.md and memory.json in `results`; returns the markdown."""
    results.mkdir(parents=True, exist_ok=True)
    markdown = format_markdown(report)
    (results / "memory.md").write_text(markdown, encoding="utf-8")
    (results / "memory.json").write_text(to_json(report), encoding="utf-8")
    return markdown


def bench(results: Path, console: Any, paths: Sequence[str] = PATHS) -> None:
    """What `mithril bench memory` runs: every path, then memory.md and memory.json."""
    report = run(paths)
    markdown = write_report(report, results)
    console.print(markdown, markup=False)
    console.print(f"(written to {results}/memory.md)")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--paths", default=",".join(PATHS), help="comma-separated paths")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--keep", action="store_true", help="keep each path's MITHRIL_HOME")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker_main(args.worker, args.data, args.out)
        return
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    unknown = set(paths) - set(PATHS)
    if unknown:
        parser.error(f"unknown paths: {', '.join(sorted(unknown))}")
    report = run(paths, data=args.data, keep=args.keep)
    print(write_report(report, args.results))


if __name__ == "__main__":
    main()
