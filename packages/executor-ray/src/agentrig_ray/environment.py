"""Which of the dispatcher's environment variables reach the Ray workers.

Workers on a cluster do not inherit the environment of ``agentrig run``: the
model endpoints, API keys and agentrig's own settings must be sent. None of
them goes into Ray's runtime environment (``runtime_env={"env_vars": ...}``):
measured with Ray 2.60, the runtime-env agent logs every ``env_vars`` value
in plain text (``session_*/logs/runtime_env_agent.log``: "Successfully
created runtime env: {"env_vars": {...}}"), the job's runtime env is shown
by the dashboard and ``ray list jobs``, and a job-level runtime env would tie
the warm workers to one run. They are put in Ray's object store instead
(:func:`ray.put`) and reach each problem's call as an argument passed by
reference: arguments are never logged, and what the dashboard and the state
API show of a call is its object reference, not the value. The worker sets
them only while a problem of that run runs.

:func:`forwarded` still tells secrets apart (names ending in KEY, TOKEN,
SECRET, ...) for whatever shows the variables sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

#: Prefixes of variables that configure agentrig, its model clients and the CLI agents.
FORWARDED_PREFIXES: tuple[str, ...] = ("AGENTRIG_", "OPENAI_", "ANTHROPIC_", "CLAUDE_CODE_", "LITELLM_", "MSWEA_")

#: Single variables worth forwarding (TLS trust for the model clients).
FORWARDED_NAMES: frozenset[str] = frozenset({"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NO_PROXY", "no_proxy"})

#: Any provider's key and endpoint: ``<PROVIDER>_API_KEY``, ``<PROVIDER>_BASE_URL`` (see agentrig.credentials).
_PROVIDER_VARIABLE = re.compile(r"^[A-Z0-9_]+_(API_KEY|API_KEY_FILE|AUTH_TOKEN|AUTH_TOKEN_FILE|BASE_URL)$")

#: A name that holds a secret value (a ``*_FILE`` variable holds a path, not a secret).
_SECRET = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$")

#: Set for the dispatcher's own process; never meant for a worker.
_NEVER: frozenset[str] = frozenset({"AGENTRIG_WORKER_PRELOAD"})


def is_secret(name: str) -> bool:
    """Whether variable ``name`` holds a secret (``OPENAI_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``)."""
    return bool(_SECRET.search(name.upper()))


def forwarded(environ: Mapping[str, str], extra: Iterable[str] = ()) -> tuple[dict[str, str], dict[str, str]]:
    """The variables of ``environ`` the workers need, split as ``(public, secrets)``.

    ``extra`` names more variables to forward (``-c executor.env=[NAME,...]``).
    """
    wanted = set(extra)
    public: dict[str, str] = {}
    secrets: dict[str, str] = {}
    for name, value in environ.items():
        if name in _NEVER:
            continue
        if not (name in wanted or name in FORWARDED_NAMES or name.startswith(FORWARDED_PREFIXES) or _PROVIDER_VARIABLE.match(name)):
            continue
        (secrets if is_secret(name) else public)[name] = value
    return public, secrets
