"""docs/webhooks.md's snippets work as written (issue 30): the Python receiver it gives checks a
real delivery with the `standardwebhooks` library and refuses one signed with another secret;
its openssl lines verify a real delivery and refuse a changed body; its curl lines sign a post
the Python receiver takes. Each block marked `<!-- tested: … -->` in the doc runs as it is
(the curl block with the receiver's port for the doc's 8080), on loopback only.

The sweep signs at the real time, as the library and `date +%s` check the timestamp against
their own clocks; the event itself is written at an explicit instant."""

import re
import shutil
import subprocess
import threading
from datetime import datetime, timedelta
from http.server import HTTPServer
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from timekeeping.basics import wallclock
from timekeeping.models import WebhookAttempt
from timekeeping.timers import outbox, records
from timekeeping.webhooks import endpoints

DOC = Path(__file__).resolve().parents[3] / "docs" / "webhooks.md"
BLOCK = re.compile(r"<!-- tested: [^>]*-->\n```(\w+)\n(.*?)```", re.S)
# A Monday evening in Toronto (EST), the venue's timed move at its close.
AT = datetime(2027, 1, 11, 21, 0, tzinfo=ZoneInfo("America/Toronto"))


def blocks() -> list[tuple[str, str]]:
    return BLOCK.findall(DOC.read_text())


def test_the_doc_marks_its_python_openssl_and_curl_blocks():
    assert [language for language, _ in blocks()] == ["python", "sh", "sh"]


def event(brand) -> str:
    with wallclock.fixed(AT):
        records.write("row.moved", brand=brand, instant=AT, data={
            "table": "orders", "row": 1042, "from": "placed", "to": "cancelled",
            "by": "timed move", "who": "timed move"})
    outbox.sweep(now=AT + timedelta(seconds=1))


@pytest.fixture
def doc_receiver(brand, settings, monkeypatch):
    """The doc's Python receiver, serving on loopback with the secret of an endpoint of the
    brand's: (its namespace, its URL, the endpoint)."""
    settings.WEBHOOK_ALLOW_HOSTS, settings.WEBHOOK_ALLOW_HTTP = ["127.0.0.1"], True
    made = endpoints.make(brand, url="http://127.0.0.1:1/", types=["row.moved"])
    monkeypatch.setenv("WEBHOOK_SECRET", made.secret)
    namespace = {"__name__": "the_docs_receiver"}
    exec(blocks()[0][1], namespace)  # noqa: S102 - the doc's own code, as a reader runs it
    server = HTTPServer(("127.0.0.1", 0), namespace["Receiver"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/"
    endpoints.change(made.endpoint, url=url)
    yield namespace, url, made.endpoint
    server.shutdown()
    server.server_close()


def test_the_docs_python_receiver_takes_a_real_delivery_and_refuses_another_secret(
        brand, doc_receiver, capsys):
    namespace, url, endpoint = doc_receiver
    stranger = endpoints.make(brand, url=url, types=["row.moved"]).endpoint  # its own secret
    event(brand)
    assert WebhookAttempt.objects.get(endpoint=endpoint).status == 200
    assert WebhookAttempt.objects.get(endpoint=stranger).status == 400
    (handled,) = namespace["handled"]
    assert handled.startswith("rec_")
    assert ("row.moved Row 1042 of orders moved from placed to cancelled by a timed move."
            in capsys.readouterr().out)


def _sh(script: str, cwd: Path, env: dict) -> str:
    return subprocess.run(["bash", "-c", script], cwd=cwd, env={"PATH": "/usr/bin:/bin", **env},
                          capture_output=True, text=True, timeout=30, check=True).stdout


@pytest.mark.skipif(not shutil.which("openssl"), reason="openssl is not installed")
def test_the_docs_openssl_lines_verify_a_real_delivery(brand, receiver, tmp_path):
    made = endpoints.make(brand, url=receiver.url)
    endpoints.rotate(made.endpoint)  # during a rotation: two signatures, either one verifies
    event(brand)
    headers, body = receiver.requests[-1]
    env = {"WEBHOOK_SECRET": made.secret, "WEBHOOK_ID": headers["webhook-id"],
           "WEBHOOK_TIMESTAMP": headers["webhook-timestamp"],
           "WEBHOOK_SIGNATURE": headers["webhook-signature"]}
    (tmp_path / "body.json").write_bytes(body)
    assert _sh(blocks()[1][1], tmp_path, env) == "verified\n"
    (tmp_path / "body.json").write_bytes(body.replace(b"cancelled", b"confirmed"))
    assert _sh(blocks()[1][1], tmp_path, env) == "not verified\n"


@pytest.mark.skipif(not (shutil.which("openssl") and shutil.which("curl")),
                    reason="openssl or curl is not installed")
def test_the_docs_curl_lines_sign_a_post_its_python_receiver_takes(doc_receiver, tmp_path):
    namespace, url, endpoint = doc_receiver
    key_line = next(line for line in blocks()[1][1].splitlines() if line.startswith("key="))
    curl = blocks()[2][1].replace("http://127.0.0.1:8080/", url)
    env = {"WEBHOOK_SECRET": endpoint.secret}
    assert _sh(f"{key_line}\n{curl}", tmp_path, env) == "200\n"
    assert namespace["handled"] == {"evt_try_1"}
