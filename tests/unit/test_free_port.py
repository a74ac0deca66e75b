"""The tests' port picker: free ports the kernel will not hand to anyone else meanwhile."""

from __future__ import annotations

import socket

from tests.conftest import _ephemeral_ports, free_port


def test_ports_are_free_distinct_and_outside_the_ephemeral_range() -> None:
    ports = [free_port() for _ in range(20)]
    assert len(set(ports)) == 20
    ephemeral = _ephemeral_ports()
    for port in ports:
        if ephemeral.start > 21000:
            assert port not in ephemeral
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", port))  # nothing holds it
