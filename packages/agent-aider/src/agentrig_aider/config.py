"""Configuration of the ``aider`` agent."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from agentrig.agents.cli_config import CliAgentConfig

#: The PyPI version of ``aider-chat`` the agent is pinned to.
DEFAULT_AIDER_VERSION = "0.86.2"

#: A Dockerfile template for the agent's image: aider in a virtual environment of its own
#: (``/opt/aider``), ``aider`` on ``PATH``. The base needs ``python3`` (3.10 to 3.12, aider's range);
#: ``venv`` comes from Debian's ``python3-venv`` when the base lacks it.
DOCKER_TEMPLATE = """\
FROM {{ base_image }}
RUN set -e; \\
    if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then \\
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv \\
      && rm -rf /var/lib/apt/lists/*; \\
    fi; \\
    python3 -m venv /opt/aider; \\
    export PIP_CERT=/etc/ssl/certs/ca-certificates.crt SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt; \\
    python3 -m venv /tmp/uv && /tmp/uv/bin/pip install --quiet --no-cache-dir --disable-pip-version-check uv; \\
    /tmp/uv/bin/uv pip install --quiet --no-cache --python /opt/aider/bin/python "aider-chat=={{ version }}"; \\
    rm -rf /tmp/uv; \\
    ln -s /opt/aider/bin/aider /usr/local/bin/aider; \\
    test "$(aider --version | cut -d' ' -f2)" = "{{ version }}"
"""

#: The variables agentrig sets for aider; a config's ``env`` may not replace them.
RESERVED_ENV = frozenset(
    {
        "OPENAI_API_KEY",
        "OPENAI_API_BASE",
        "OPENAI_BASE_URL",
        "HOME",
        "LITELLM_LOCAL_MODEL_COST_MAP",
        "AGENTRIG_AIDER_BINARY",
    }
)

#: Flags agentrig passes itself (or that would undo what it relies on); ``extra_args`` may not hold them.
RESERVED_FLAGS = frozenset(
    {
        "--model",
        "--weak-model",
        "--editor-model",
        "--openai-api-key",
        "--openai-api-base",
        "--api-key",
        "--set-env",
        "--message",
        "-m",
        "--message-file",
        "-f",
        "--yes-always",
        "--git",
        "--no-git",
        "--auto-commits",
        "--dirty-commits",
        "--analytics",
        "--analytics-log",
        "--analytics-disable",
        "--check-update",
        "--just-check-update",
        "--install-main-branch",
        "--upgrade",
        "--update",
        "--stream",
        "--no-stream",
        "--config",
        "-c",
        "--env-file",
        "--chat-history-file",
        "--input-history-file",
        "--llm-history-file",
        "--restore-chat-history",
        "--no-restore-chat-history",
        "--detect-urls",
        "--gui",
        "--browser",
        "--watch-files",
        "--edit-format",
        "--chat-mode",
        "--test-cmd",
        "--auto-test",
        "--auto-lint",
        "--no-auto-lint",
        "--file",
        "--read",
    }
)

EditFormat = Literal["whole", "diff", "diff-fenced", "udiff", "udiff-simple", "patch", "architect", "editor-diff",
                     "editor-whole", "editor-diff-fenced"]


class AiderConfig(CliAgentConfig):
    """How to launch aider (PyPI ``aider-chat``) on a checkpoint.

    ``version`` is the PyPI version of ``aider-chat``: an ``aider`` reporting another version is
    refused at setup (``version: null`` accepts any). ``binary`` is the ``aider`` executable of
    aider's own environment (a virtual environment's ``bin/aider``): the agent runs its launcher
    with the Python beside it. The key reaches aider through ``OPENAI_API_KEY`` in its
    environment only; aider speaks the OpenAI chat-completions API (through LiteLLM) to the
    model's endpoint. Cost, step and time limits are enforced while it runs by killing its process tree.
    """

    type: Literal["aider"] = "aider"
    #: aider has no MCP client: a config naming MCP servers is refused (one line).
    supports_mcp: ClassVar[bool] = False
    reserved_env: ClassVar[frozenset[str]] = RESERVED_ENV
    reserved_flags: ClassVar[frozenset[str]] = RESERVED_FLAGS
    version: str | None = Field(default=DEFAULT_AIDER_VERSION, description="PyPI version of aider-chat.")
    docker_template: str | None = Field(
        default=DOCKER_TEMPLATE,
        description="Dockerfile template of the agent's image ({{ base_image }}, {{ version }}); pip-installs aider-chat.",
    )
    base_url: str | None = Field(
        default=None, description="The chat-completions base URL (…/v1); overrides the model's and OPENAI_BASE_URL."
    )
    edit_format: EditFormat | None = Field(
        default=None, description="aider's --edit-format; none: aider's choice for the model (whole for unknown models)."
    )
    chat_files: Literal["workspace", "none"] = Field(
        default="workspace",
        description="Files added to aider's chat: every file of the workspace (up to max_chat_files), or none.",
    )
    max_chat_files: int = Field(default=100, ge=0, description="At most this many workspace files go into the chat.")
    max_chat_file_bytes: int = Field(
        default=100_000, ge=0, description="Workspace files larger than this stay out of the chat (binary files too)."
    )
    max_chat_bytes: int = Field(
        default=400_000, ge=0, description="The files put into the chat hold at most this many bytes together (~100k tokens)."
    )
    git: bool = Field(
        default=False,
        description="Let aider use the workspace's git repository (read-only: it never commits); false: --no-git.",
    )
    auto_lint: bool = Field(default=True, description="aider's --auto-lint (it lints what it edited and fixes errors).")
    test_cmd: str | None = Field(
        default=None, description="aider's --test-cmd with --auto-test: run after each edit, failures sent back to the model."
    )
    map_tokens: int | None = Field(
        default=None, ge=0, description="aider's --map-tokens (repository map); none: 0 without git, aider's default with it."
    )
    stream_parser: str = Field(default="aider-events", description="The stream parser reading the launcher's events.")
