"""docs/serving.md's probe examples: the docker-compose healthcheck command, run as written against
`mockagent serve` as the compose file starts it (on a real redis-server), passes while Redis
answers, fails while it is gone and passes again when it is back; the Kubernetes readinessProbe
asks the real health route on the port the container serves, as the kubelet does."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from mockagent.cli.serve import admin_enabled
from mockagent.server.app import create_app, served_on
from mockagent.server.health import HEALTH_PATH, HEALTH_TIMEOUT_S
from tests.helpers.docs import ROOT, block, local_env, start
from tests.helpers.redis_server import start_redis

KIT = ROOT / "cassettes" / "kit"


def serve_args(shell: str) -> list[str]:
    """The arguments of `mockagent serve` in a container's `sh -c` line."""
    words = shlex.split(shell)
    at = words.index("mockagent")
    assert words[at - 1] == "exec" and words[at + 1] == "serve"  # signals reach the server
    return words[at + 2 :]


def option(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def test_the_compose_healthcheck_follows_redis_down_and_back(tmp_path: Path) -> None:
    compose = yaml.safe_load(block("docs/serving.md", "yaml", "healthcheck:").text)
    service = compose["services"]["mockagent"]
    assert compose["services"]["client-tests"]["depends_on"] == {
        "mockagent": {"condition": "service_healthy"}
    }
    sh, dash_c, shell = service["command"]
    assert (sh, dash_c) == ("sh", "-c")
    args = serve_args(shell)
    assert args[0] == "/cassettes" and option(args, "--host") == "0.0.0.0"
    assert not admin_enabled("0.0.0.0", None)  # the admin API is off there: the probe is not
    cmd, python, dash_c, code = service["healthcheck"]["test"]
    assert (cmd, python, dash_c) == ("CMD", "python", "-c")
    port = option(args, "--port")
    assert f"http://localhost:{port}{HEALTH_PATH}" in code

    redis_server, url = start_redis()
    redis_port = int(url.rsplit(":", 1)[1])
    # As the container runs it, on this machine: the kit, loopback with the admin API off as
    # on 0.0.0.0, a free port, the test's redis-server
    local = {"/cassettes": str(KIT), "0.0.0.0": "127.0.0.1", port: "0"}
    local[option(args, "--store")] = f"{url}/0"
    served = start(["serve", *(local.get(arg, arg) for arg in args), "--no-admin"], tmp_path / "e")

    def healthcheck() -> subprocess.CompletedProcess[str]:
        here = code.replace(f"localhost:{port}", served.url.removeprefix("http://"))
        run = [sys.executable, "-c", here]
        return subprocess.run(run, env=local_env(), capture_output=True, text=True, timeout=30)

    try:
        assert healthcheck().returncode == 0
        redis_server.terminate()
        redis_server.wait(timeout=10)
        down = healthcheck()  # a 503: urlopen raises, the check fails
        assert down.returncode != 0 and "HTTP Error 503" in down.stderr
        redis_server, _ = start_redis(redis_port)
        assert healthcheck().returncode == 0  # the same server, no restart
        assert served.process.poll() is None
    finally:
        served.stop()
        redis_server.terminate()
        redis_server.wait(timeout=10)


def test_the_kubernetes_readiness_probe_asks_the_health_route() -> None:
    deployment = yaml.safe_load(block("docs/serving.md", "yaml", "readinessProbe:").text)
    pod: dict[str, Any] = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    sh, dash_c, shell = container["command"]
    assert (sh, dash_c) == ("sh", "-c")
    args = serve_args(shell)
    assert "--join" in args and "--store" not in args  # the URL comes from the Secret
    assert container["env"] == [
        {
            "name": "MOCKAGENT_STORE",
            "valueFrom": {"secretKeyRef": {"name": "mockagent-redis", "key": "url"}},
        }
    ]
    probe = container["readinessProbe"]
    assert "livenessProbe" not in container  # a Redis outage is no reason to restart the pod
    assert probe["httpGet"] == {"path": HEALTH_PATH, "port": int(option(args, "--port"))}
    assert [p["containerPort"] for p in container["ports"]] == [probe["httpGet"]["port"]]
    assert probe["timeoutSeconds"] > 2 * HEALTH_TIMEOUT_S  # a 503 comes before the kubelet gives up
    mount = container["volumeMounts"][0]
    assert args[0] == mount["mountPath"] and mount["name"] == pod["volumes"][0]["name"]

    host = option(args, "--host")
    app = create_app(KIT, admin=admin_enabled(host, None))
    served_on(app, host)
    try:
        client = app.test_client()
        # the kubelet: GET with the pod's IP and the port as Host, no Origin, no token
        kubelet = {"Host": f"10.244.1.17:{probe['httpGet']['port']}", "User-Agent": "kube-probe"}
        answer = client.get(probe["httpGet"]["path"], headers=kubelet)
        assert answer.status_code == 200 and answer.get_json()["status"] == "ok"
        assert client.get("/_mockagent/calls", headers=kubelet).status_code == 404  # admin off
    finally:
        app.extensions["mockagent"].close()
