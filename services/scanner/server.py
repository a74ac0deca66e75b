"""Build the scanner's gRPC server: load the rules, then register and report SERVING."""

from __future__ import annotations

from mithril.runtime.server import ServiceServer, build_server
from mithril.scanner.v1 import scanner_service_pb2_grpc as pb_grpc
from mithril.services.scanner.config import ScannerSettings
from mithril.services.scanner.scanner import Scanner
from mithril.services.scanner.servicer import SERVICE_NAME, ScannerServicer


async def create_server(settings: ScannerSettings | None = None) -> ServiceServer:
    """A bound, unstarted server; unpacks as `(server, port)`."""
    settings = settings or ScannerSettings()
    servicer = ScannerServicer(Scanner.from_rule_files(settings.rule_files))
    handle = await build_server(
        settings,
        [
            (
                SERVICE_NAME,
                lambda server: pb_grpc.add_ScannerServiceServicer_to_server(servicer, server),
            )
        ],
    )
    await handle.mark_serving()  # the rules are compiled: ready
    return handle
