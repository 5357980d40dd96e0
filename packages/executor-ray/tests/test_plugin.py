"""The plugin side of agentrig-ray: declared through the hook without importing Ray; what is sent to workers, and how."""

from __future__ import annotations

import subprocess
import sys

from agentrig_ray.environment import forwarded, is_secret


def test_the_ray_executor_is_declared_without_importing_ray(plugin_registry) -> None:  # type: ignore[no-untyped-def]
    spec = plugin_registry.executor_specs()["ray"]
    assert spec.executor == "agentrig_ray.executor:RayExecutor"
    info = [p for p in plugin_registry.plugins() if p.name == "ray"][0]
    assert info.distribution == "agentrig-ray" and info.error is None and info.hooks == ["agentrig_executors"]
    code = (
        "import sys; from agentrig.plugins import get_registry; get_registry().executor_specs();"
        " print(sorted(m for m in sys.modules if m == 'ray' or m.startswith(('ray.', 'agentrig_ray.executor'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip() == "[]"


def test_secrets_and_settings_are_told_apart() -> None:
    environ = {
        "OPENAI_API_KEY": "sk-1", "OPENAI_BASE_URL": "http://fake/v1", "ANTHROPIC_AUTH_TOKEN": "tok",
        "ANTHROPIC_API_KEY_FILE": "/run/secrets/key", "VLLM_API_KEY": "v", "VLLM_BASE_URL": "http://vllm",
        "AGENTRIG_DISABLE_PLUGINS": "x", "AGENTRIG_WORKER_PRELOAD": "agentrig.run", "SSL_CERT_FILE": "/ca.pem",
        "HOME": "/root", "PATH": "/bin", "AWS_SECRET_ACCESS_KEY": "aws", "MY_SETTING": "1", "GITHUB_TOKEN": "gh",
    }
    public, secrets = forwarded(environ, extra=["MY_SETTING", "GITHUB_TOKEN"])
    assert public == {
        "OPENAI_BASE_URL": "http://fake/v1", "ANTHROPIC_API_KEY_FILE": "/run/secrets/key", "VLLM_BASE_URL": "http://vllm",
        "AGENTRIG_DISABLE_PLUGINS": "x", "SSL_CERT_FILE": "/ca.pem", "MY_SETTING": "1",
    }
    assert secrets == {"OPENAI_API_KEY": "sk-1", "ANTHROPIC_AUTH_TOKEN": "tok", "VLLM_API_KEY": "v", "GITHUB_TOKEN": "gh"}
    assert is_secret("AWS_SECRET_ACCESS_KEY") and not is_secret("OPENAI_BASE_URL") and not is_secret("OPENAI_API_KEY_FILE")


def test_a_ray_client_server_that_died_while_starting_names_the_heads_fix() -> None:
    from agentrig_ray.executor import _connect_error

    # what ray.init("ray://...") raises when the head's proxier could not start the client's server (Ray 2.60)
    remote = (
        "Traceback (most recent call last):\n  File \".../ray/util/client/server/proxier.py\", line 772, in Datapath\n"
        "    raise RuntimeError(\nRuntimeError: Starting Ray client server failed. See ray_client_server_23000.err"
        " for detailed logs.\n"
    )
    line = _connect_error("ray://10.0.0.1:10001", ConnectionAbortedError(f"Initialization failure from server:\n{remote}"))
    assert line.startswith("cannot connect to the Ray cluster at ray://10.0.0.1:10001: ")
    assert "GRPC_ENABLE_FORK_SUPPORT=0" in line and "\n" not in line and "Traceback" not in line
    other = _connect_error("10.0.0.1:6379", ConnectionError("GCS at 10.0.0.1:6379 did not respond"))
    assert other == "cannot reach the Ray cluster at 10.0.0.1:6379: GCS at 10.0.0.1:6379 did not respond"
