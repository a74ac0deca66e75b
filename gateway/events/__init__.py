"""The gateway's event log: every decision, redacted, written off the hot path.

`EventRecord` is one decision; `EventStore` persists records with SQLAlchemy (SQLite under
`MITHRIL_HOME` by default, PostgreSQL by URL); `EventLog` queues records from the request
path and writes them in batches on a worker thread.
"""

from mithril.gateway.events.record import EXCERPT_MAX_CHARS, EventRecord, redacted_excerpt
from mithril.gateway.events.store import EventStore, default_database_url
from mithril.gateway.events.writer import EventLog

__all__ = [
    "EXCERPT_MAX_CHARS",
    "EventLog",
    "EventRecord",
    "EventStore",
    "default_database_url",
    "redacted_excerpt",
]
