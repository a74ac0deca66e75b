"""`python -m mithril.services.scanner`: run the scanner service until SIGTERM."""

import uvloop

from mithril.runtime.server import serve_until_signalled
from mithril.services.scanner.config import ScannerSettings
from mithril.services.scanner.server import create_server


def main() -> None:
    settings = ScannerSettings()
    uvloop.run(serve_until_signalled("scanner", settings, lambda: create_server(settings)))


if __name__ == "__main__":
    main()
