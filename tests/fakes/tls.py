"""A self-signed certificate for 127.0.0.1, made with the ``openssl`` command, so a fake
can serve HTTPS to a client that trusts it through ``REQUESTS_CA_BUNDLE``."""

import subprocess
from pathlib import Path


def certificate(folder: Path) -> tuple[str, str]:
    """(certificate file, key file) for ``https://127.0.0.1``, valid for a day."""
    cert, key = folder / "loopback.crt", folder / "loopback.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
                    "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return str(cert), str(key)
