"""Request validation for every gRPC service, driven by one table.

Every string and repeated field of every request is bounded (max_text_chars,
max_batch_items); the fields a proto comment calls "Must not be empty" are listed in
REQUIRED. Violations become INVALID_ARGUMENT or RESOURCE_EXHAUSTED with details.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from mithril.runtime import errors

# Request message full name -> fields that must be non-empty (strings) or non-empty (lists).
REQUIRED: dict[str, tuple[str, ...]] = {
    "mithril.scanner.v1.ScanRequest": ("text",),
    "mithril.scanner.v1.ScanBatchRequest": ("requests",),
    "mithril.secrets.v1.DetectRequest": ("text",),
    "mithril.secrets.v1.DetectBatchRequest": ("requests",),
    "mithril.secrets.v1.RedactRequest": ("text",),
    "mithril.embedding.v1.EmbedRequest": ("texts",),
    "mithril.embedding.v1.ScoreSimilarityRequest": ("texts",),
    "mithril.embedding.v1.ClassifyRequest": ("texts",),
    "mithril.embedding.v1.ReadLinesRequest": ("texts",),
    "mithril.judge.v1.JudgeRequest": ("text",),
    "mithril.judge.v1.ScoreContradictionRequest": ("claim",),
    "mithril.judge.v1.ScoreDangerRequest": ("claim",),
    "mithril.reputation.v1.GetReputationRequest": ("source",),
    "mithril.reputation.v1.RecordOutcomeRequest": ("source", "outcome"),
    "mithril.reputation.v1.GetHistoryRequest": ("source",),
    "mithril.memorygate.v1.RememberRequest": ("claim", "source"),
    "mithril.memorygate.v1.RecallRequest": ("query",),
    "mithril.memorygate.v1.GetQuarantinedRequest": ("id",),
    "mithril.memorygate.v1.ReviewQuarantinedRequest": ("id", "verdict", "reviewer"),
    "mithril.firewall.v1.ScanRequest": ("text",),
    "mithril.firewall.v1.ScanBatchRequest": ("requests",),
    "mithril.firewall.v1.ScanMessagesRequest": ("messages",),
    "mithril.firewall.v1.RedactRequest": ("text",),
}


@dataclass(frozen=True, slots=True)
class Limits:
    max_text_chars: int
    max_batch_items: int


def validate(message: Message, limits: Limits) -> grpc.Status | None:
    """The first problem with a request as a status, or None when it is acceptable."""
    oversize = _find_oversize(message, limits, prefix="")
    if oversize is not None:
        return oversize
    violations = _missing_required(message, prefix="")
    if violations:
        return errors.invalid_argument(violations)
    return None


def _missing_required(message: Message, prefix: str) -> list[tuple[str, str]]:
    violations: list[tuple[str, str]] = []
    descriptor = message.DESCRIPTOR
    for name in REQUIRED.get(descriptor.full_name, ()):
        field = descriptor.fields_by_name[name]
        value = getattr(message, name)
        empty = len(value) == 0 if _is_repeated(field) else not value
        if empty:
            what = "at least one item" if _is_repeated(field) else "a value"
            violations.append((prefix + name, f"must not be empty; give {what}"))
    for field in descriptor.fields:
        if field.message_type is None or field.message_type.GetOptions().map_entry:
            continue
        if _is_repeated(field):
            for index, item in enumerate(getattr(message, field.name)):
                violations += _missing_required(item, f"{prefix}{field.name}[{index}].")
        elif message.HasField(field.name):
            violations += _missing_required(getattr(message, field.name), f"{prefix}{field.name}.")
    return violations


def _find_oversize(message: Message, limits: Limits, prefix: str) -> grpc.Status | None:
    for field, value in message.ListFields():
        path = prefix + field.name
        if _is_repeated(field) and not (
            field.message_type is not None and field.message_type.GetOptions().map_entry
        ):
            if len(value) > limits.max_batch_items:
                return errors.resource_exhausted(
                    path, f"{len(value)} items exceed the limit of {limits.max_batch_items}"
                )
            items = list(value)
        elif field.message_type is not None and field.message_type.GetOptions().map_entry:
            items = [*value.keys(), *value.values()]
        else:
            items = [value]
        for index, item in enumerate(items):
            if isinstance(item, str) and len(item) > limits.max_text_chars:
                return errors.resource_exhausted(
                    path,
                    f"{len(item)} characters exceed the limit of {limits.max_text_chars}",
                )
            if isinstance(item, Message):
                found = _find_oversize(item, limits, f"{path}[{index}].")
                if found is not None:
                    return found
    return None


def _is_repeated(field: FieldDescriptor) -> bool:
    # `is_repeated` arrived in protobuf 6; `label` is deprecated there.
    repeated = getattr(field, "is_repeated", None)
    if repeated is not None:
        return bool(repeated)
    return field.label == FieldDescriptor.LABEL_REPEATED
