"""Every secret detector, one per module, looked up by kind name in `REGISTRY`."""

from __future__ import annotations

from types import MappingProxyType

from mithril.services.secrets.detectors import (
    anthropic,
    aws,
    basic_auth,
    bearer,
    credential_assignment,
    credit_card,
    database_uri,
    email,
    encoded,
    github,
    google_api_key,
    iban,
    jwt,
    openai_style,
    pem_private_key,
    phone,
    slack,
    slack_webhook,
    spelled,
    ssn,
    stripe,
    url_credentials,
    url_encoded,
)
from mithril.services.secrets.detectors.base import Candidate, Detector
from mithril.services.secrets.kinds import CREDENTIAL

_MODULES = (
    pem_private_key,
    aws,
    github,
    slack,
    slack_webhook,
    google_api_key,
    openai_style,
    anthropic,
    stripe,
    jwt,
    database_uri,
    url_credentials,
    bearer,
    basic_auth,
    credential_assignment,
    ssn,
    credit_card,
    email,
    phone,
    iban,
)

_PLAIN: dict[str, Detector] = {module.DETECTOR.info.name: module.DETECTOR for module in _MODULES}
_CREDENTIALS = tuple(d for d in _PLAIN.values() if d.info.category == CREDENTIAL)
_ENCODED = encoded.EncodedCredentialDetector(_CREDENTIALS)
_READ_AGAIN = tuple(d for d in _CREDENTIALS if d is not pem_private_key.DETECTOR)
_REWRITTEN = (_ENCODED, spelled.detector(_READ_AGAIN), url_encoded.detector(_READ_AGAIN))

REGISTRY: MappingProxyType[str, Detector] = MappingProxyType(
    {**_PLAIN, **{d.info.name: d for d in _REWRITTEN}}
)
"""Kind name -> detector. The one place that lists what the library detects."""

__all__ = ["REGISTRY", "Candidate", "Detector"]
