"""A real redis-server of a test's own on a free port (the test skips, saying why, without one)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tls_files(folder: Path) -> dict[str, Path]:
    """A certificate authority and a server certificate for 127.0.0.1 it signed, made in `folder`
    with the openssl command (the test skips without it): ca, cert and key."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed: no certificates for a TLS redis-server")
    files = {name: folder / f"{name}.pem" for name in ("ca", "ca-key", "cert", "key", "csr")}
    (folder / "san.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for command in (
        ["req", "-x509", *key, "-keyout", files["ca-key"], "-out", files["ca"], "-days", "1"]
        + ["-subj", "/CN=mockagent test CA"],
        ["req", *key, "-keyout", files["key"], "-out", files["csr"], "-subj", "/CN=127.0.0.1"],
        ["x509", "-req", "-in", files["csr"], "-CA", files["ca"], "-CAkey", files["ca-key"]]
        + ["-CAcreateserial", "-out", files["cert"], "-days", "1"]
        + ["-extfile", folder / "san.cnf"],
    ):
        subprocess.run(["openssl", *map(str, command)], check=True, capture_output=True)
    return files


def _tls_options(tls: Path | None, port: int) -> list[str]:
    """TLS on `port` and no plain port (the last `--port` wins)."""
    if tls is None:
        return []
    files = tls_files(tls)
    return [
        *("--port", "0", "--tls-port", str(port), "--tls-auth-clients", "no"),
        *("--tls-cert-file", str(files["cert"]), "--tls-key-file", str(files["key"])),
        *("--tls-ca-cert-file", str(files["ca"])),
    ]


def start_redis(
    port: int | None = None, password: str = "", unix: str = "", tls: Path | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """A redis-server of the caller's own on `port` (a free one by default) and its URL, once it
    answers; with `unix`, on that socket path too, and the URL is the socket's; with `tls` (a
    folder for the certificates), TLS only, and the URL is rediss:// trusting its CA. Skips the
    test without one."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip(
            "redis-server is not installed (scripts/test installs it where it may use apt-get)"
        )
    port = port or _free_port()
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            *(["--requirepass", password] if password else []),
            *(["--unixsocket", unix] if unix else []),
            *_tls_options(tls, port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://{f':{password}@' if password else ''}127.0.0.1:{port}"
    if unix:
        url = f"unix://{unix}"
    if tls is not None:
        url = f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={tls / 'ca.pem'}"
    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + 10
    try:
        while True:  # poll until it answers
            try:
                client.ping()
                return process, url
            except redis.exceptions.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    pytest.skip(f"redis-server did not start on port {port}")
                time.sleep(0.005)
    finally:
        client.close()
