"""`python -m mithril.services.memorygate`: run the memory gate until SIGTERM."""

import uvloop

from mithril.runtime.server import serve_until_signalled
from mithril.services.memorygate.config import MemoryGateSettings
from mithril.services.memorygate.server import create_server


def main() -> None:
    settings = MemoryGateSettings()
    uvloop.run(serve_until_signalled("memory-gate", settings, lambda: create_server(settings)))


if __name__ == "__main__":
    main()
