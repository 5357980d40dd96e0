"""aider's command line, its environment and the workspace files put into its chat.

aider runs as ``sh -c RESOLVE agentrig-aider BINARY LAUNCHER ARGS...``: the shell finds the
Python of aider's own environment beside the ``aider`` executable (following symbolic links, so
``/usr/local/bin/aider -> /opt/aider/bin/aider`` works) and runs agentrig's launcher with it. The
task is in a file (``--message-file``), the key only in the environment.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentrig.credentials import ProviderCredential
    from agentrig_aider.config import AiderConfig

#: The shell snippet that runs the launcher with the Python beside the ``aider`` executable ``$1``.
RESOLVE_PYTHON = (
    'bin=$(command -v "$1") || { echo "agentrig: the aider executable \'$1\' is not on PATH" >&2; exit 127; }; '
    'py="$(dirname "$(readlink -f "$bin")")/python"; '
    '[ -x "$py" ] || { echo "agentrig: no python beside $bin ($py): \'binary\' must be the aider of a virtual '
    "environment (its bin/aider)\" >&2; exit 127; }; "
    'shift; launcher=$1; shift; exec "$py" "$launcher" "$@"'
)


class StateFiles:
    """The paths (as the runtime sees them) of the files aider reads and writes in its state directory."""

    def __init__(self, state_dir: str) -> None:
        self.state_dir = state_dir.rstrip("/")

    def path(self, name: str) -> str:
        """``name`` inside the state directory."""
        return f"{self.state_dir}/{name}"

    @property
    def launcher(self) -> str:
        """agentrig's launcher script."""
        return self.path("launcher.py")

    @property
    def message(self) -> str:
        """The checkpoint's task (``--message-file``)."""
        return self.path("message.md")

    @property
    def chat_history(self) -> str:
        """aider's chat history (restored when the conversation continues)."""
        return self.path("chat.history.md")

    @property
    def input_history(self) -> str:
        """aider's input history."""
        return self.path("input.history")


def build_argv(
    config: AiderConfig,
    *,
    binary: str,
    model: str,
    files: StateFiles,
    chat_files: list[str],
    restore_history: bool,
) -> list[str]:
    """The argument vector (no shell of the user's): launcher, model, non-interactive switches, chat files."""
    argv = ["sh", "-c", RESOLVE_PYTHON, "agentrig-aider", binary, files.launcher]
    # one model for every call (aider's weak model writes chat summaries): what agentrig prices is what runs
    name = f"openai/{model}"
    argv += ["--model", name, "--weak-model", name, "--editor-model", name, "--message-file", files.message]
    argv += [
        "--yes-always",            # answers aider's questions; shell commands still need an explicit yes: never run
        "--no-auto-commits", "--no-dirty-commits",
        "--no-analytics", "--no-check-update", "--no-show-release-notes", "--no-show-model-warnings",
        "--no-detect-urls", "--no-suggest-shell-commands",
        "--no-pretty", "--no-fancy-input", "--no-stream",  # usage per call: only whole responses carry it
        "--no-gitignore", "--encoding", "utf-8",
        "--chat-history-file", files.chat_history,
        "--input-history-file", files.input_history,
        "--restore-chat-history" if restore_history else "--no-restore-chat-history",
    ]
    if not config.git:
        argv.append("--no-git")
    map_tokens = config.map_tokens if config.map_tokens is not None else (None if config.git else 0)
    if map_tokens is not None:
        argv += ["--map-tokens", str(map_tokens)]
    if config.edit_format is not None:
        argv += ["--edit-format", config.edit_format]
    argv.append("--auto-lint" if config.auto_lint else "--no-auto-lint")
    if config.test_cmd:
        argv += ["--test-cmd", config.test_cmd, "--auto-test"]
    argv += config.extra_args
    argv += [f"--file={name}" for name in chat_files]
    return argv


def build_env(*, credential: ProviderCredential | None, base_url: str, home: str, extra: dict[str, str]) -> dict[str, str]:
    """The environment added to the runtime's for aider: the key, the endpoint (both variable names LiteLLM
    reads, so neither a host's other value wins), an isolated ``HOME`` and LiteLLM's bundled price list."""
    env = dict(extra)
    if credential is not None:
        env["OPENAI_API_KEY"] = credential.secret()
    env["OPENAI_API_BASE"] = base_url
    env["OPENAI_BASE_URL"] = base_url
    env["HOME"] = home
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # LiteLLM would fetch its price list from GitHub at import
    return env


def workspace_chat_files(root: Path, *, limit: int, max_bytes: int, total_bytes: int | None = None) -> list[str]:
    """Relative paths of the workspace's regular text files for aider's chat, in name order: no hidden
    files or directories (``.git``, ``.aider*``), no symbolic links, none over ``max_bytes`` or holding a
    NUL byte in its first 8 KiB, at most ``limit`` of them holding at most ``total_bytes`` together (a file
    that would pass it is left out, smaller ones after it may still go in). Names stay arguments of
    ``--file=``: one starting with ``-`` is never taken for a flag."""
    found: list[str] = []
    budget = total_bytes if total_bytes is not None else float("inf")
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = Path(directory) / name
            if path.is_symlink() or not path.is_file():
                continue
            try:
                size = path.stat().st_size
                if size > max_bytes or size > budget:
                    continue
                with open(path, "rb") as handle:
                    if b"\0" in handle.read(8192):
                        continue
            except OSError:
                continue
            budget -= size
            found.append(path.relative_to(root).as_posix())
            if len(found) >= limit:
                return found
    return found
