"""HTTPS webhooks pinned to the checked address still verify the certificate against the URL's
host name (SNI and hostname check), not against the address connected to."""

from __future__ import annotations

import datetime
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from mockagent.engine.webhooks import send as webhook_send
from mockagent.engine.webhooks.policy import WebhookPolicy

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402


def self_signed(folder: Path, name: str) -> tuple[Path, Path]:
    """A certificate for `name` (its own CA) and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


class _Hosts(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.hosts.append(self.headers["Host"])  # type: ignore[attr-defined]
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def tls_receiver(tmp_path: Path) -> Iterator[tuple[ThreadingHTTPServer, Path]]:
    cert, key = self_signed(tmp_path, "hooks.test")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hosts)
    server.hosts = []  # type: ignore[attr-defined]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    yield server, cert
    server.shutdown()
    server.server_close()


def post(client: httpx.Client, url: str) -> tuple[int | None, str | None]:
    return webhook_send.post(
        client,
        url,
        b"{}",
        {},
        deadline_s=5,
        policy=WebhookPolicy.of(["hooks.test", "other.test"]),
        resolver=lambda host, port: ["127.0.0.1"],
    )


def test_the_certificate_is_checked_against_the_urls_host(
    tls_receiver: tuple[ThreadingHTTPServer, Path],
) -> None:
    server, cert = tls_receiver
    port = server.server_address[1]
    trusting = ssl.create_default_context(cafile=str(cert))
    with httpx.Client(verify=trusting, trust_env=False) as client:
        assert post(client, f"https://hooks.test:{port}/hook") == (204, None)
        status, error = post(client, f"https://other.test:{port}/hook")  # same address
    assert status is None and error is not None and "CERTIFICATE_VERIFY_FAILED" in error
    assert server.hosts == [f"hooks.test:{port}"]  # type: ignore[attr-defined]
