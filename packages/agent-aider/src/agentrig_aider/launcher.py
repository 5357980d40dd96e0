"""agentrig's launcher of aider: run inside aider's own Python, never imported by agentrig.

The agent copies this file into the session's state directory and starts it with the Python of
aider's environment (``python launcher.py AIDER-ARGS...``). It runs ``aider.main.main`` with
the arguments as given, after:

- moving aider's own output (everything written to file descriptor 1) to standard error, and
  keeping standard output for one JSON event per line: each model call with the usage the
  endpoint reported (``model_call``), a failed model call (``model_error``), the files an
  answer edited (``edits``), the message aider sends back to the model on its own (``reflection``:
  a failed edit, a lint or test failure, files it added), aider's error lines (``tool_error``) and
  the exit status (``exit``);
- keeping the workspace out of aider's settings: ``.aider.conf.yml``, ``.env``,
  ``.aider.model.settings.yml`` and ``.aider.model.metadata.json`` found in the working directory
  (or the home directory) are not read, only what agentrig passes;
- keeping aider off the network except for the model endpoint: no model price list download,
  no OpenRouter lookup, no version check, no browser, no URL scraping;
- turning off aider's in-chat commands: a task starting with ``/`` or ``!`` is text for the model.

Only the standard library and aider are used here: this file runs where agentrig is not installed.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from typing import Any

_EVENTS = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
os.dup2(2, 1)  # aider's own output (rich, print) goes to standard error from here on


def emit(kind: str, **fields: Any) -> None:
    """Write one event line on the events stream (the launcher's standard output)."""
    _EVENTS.write(json.dumps({"type": kind, "time": time.time(), **fields}, default=str) + "\n")
    _EVENTS.flush()


def _usage(completion: Any) -> dict[str, Any] | None:
    usage = getattr(completion, "usage", None)
    if usage is None:
        return None
    if hasattr(usage, "model_dump"):
        data = usage.model_dump()
    elif isinstance(usage, dict):
        data = dict(usage)
    else:
        data = {k: getattr(usage, k) for k in dir(usage) if not k.startswith("_")}
    return json.loads(json.dumps(data, default=lambda value: None))


def _message(completion: Any) -> tuple[str, str | None]:
    choices = getattr(completion, "choices", None) or []
    if not choices:
        return "", None
    message = getattr(choices[0], "message", None)
    return str(getattr(message, "content", None) or ""), getattr(choices[0], "finish_reason", None)


def _patch_model_calls(models: Any, base_coder: Any) -> None:
    """Every model call (the coder's, and the weak model's chat summaries) through ``Model.send_completion``."""
    import threading

    acting = threading.local()
    send_completion = models.Model.send_completion
    send = base_coder.Coder.send

    def send_completion_wrapped(self: Any, messages: Any, functions: Any, stream: Any, temperature: Any = None) -> Any:
        tag = "act" if getattr(acting, "active", False) else "summary"
        started = time.time()
        try:
            hashed, completion = send_completion(self, messages, functions, stream, temperature)
        except Exception as exc:
            emit("model_error", tag=tag, error=type(exc).__name__, message=str(exc), started=started)
            raise
        content, finish = _message(completion) if not stream else ("", None)
        emit(
            "model_call",
            tag=tag,
            id=getattr(completion, "id", None),
            model=getattr(completion, "model", None),
            usage=None if stream else _usage(completion),
            content=content,
            finish_reason=finish,
            messages=len(messages or []),
            started=started,
        )
        return hashed, completion

    def send_wrapped(self: Any, messages: Any, model: Any = None, functions: Any = None) -> Any:
        acting.active = True
        try:
            return (yield from send(self, messages, model=model, functions=functions))
        finally:
            acting.active = False

    models.Model.send_completion = send_completion_wrapped
    base_coder.Coder.send = send_wrapped


def _patch_coder(base_coder: Any) -> None:
    coder = base_coder.Coder
    send_message = coder.send_message
    apply_updates = coder.apply_updates

    def send_message_wrapped(self: Any, inp: Any) -> Any:
        result = yield from send_message(self, inp)
        if self.reflected_message:
            emit("reflection", message=str(self.reflected_message))
        return result

    def apply_updates_wrapped(self: Any) -> Any:
        before = self.reflected_message
        edited = apply_updates(self)
        failed = self.reflected_message if self.reflected_message != before else None
        if edited or failed:
            # on a failure, the files named are those the answer tried to edit (some blocks may have applied)
            emit("edits", files=sorted(str(path) for path in edited or ()), error=str(failed) if failed else None)
        return edited

    coder.send_message = send_message_wrapped
    coder.apply_updates = apply_updates_wrapped


def _patch_io(io_module: Any) -> None:
    output = io_module.InputOutput
    tool_error = output.tool_error

    def tool_error_wrapped(self: Any, message: Any = "", strip: bool = True) -> Any:
        if str(message).strip():
            emit("tool_error", message=str(message))
        return tool_error(self, message, strip)

    output.tool_error = tool_error_wrapped
    output.offer_url = lambda self, url, prompt="", allow_never=True: False


def _patch_settings_and_network(main: Any, models: Any) -> None:
    get_parser = main.get_parser

    # only the files agentrig names: no .aider.conf.yml from the workspace or the home directory
    main.get_parser = lambda default_config_files, git_root: get_parser([], git_root)
    # no .env, .aider.model.settings.yml or .aider.model.metadata.json from the workspace
    main.generate_search_path_list = lambda default_file, git_root, command_line_file: []
    main.check_version = lambda *args, **kwargs: False
    models.ModelInfoManager._update_cache = lambda self: None
    models.ModelInfoManager.fetch_openrouter_model_info = lambda self, model: {}
    openrouter = importlib.import_module("aider.openrouter")
    openrouter.OpenRouterModelManager._update_cache = lambda self: None


def _patch_commands(commands: Any) -> None:
    commands.Commands.is_command = lambda self, inp: False


def run(argv: list[str]) -> int:
    """Run aider's ``main`` on ``argv`` with the patches above; its exit status."""
    import webbrowser

    webbrowser.open = lambda *args, **kwargs: False  # nothing opens a browser
    aider = importlib.import_module("aider")
    main = importlib.import_module("aider.main")
    models = importlib.import_module("aider.models")
    _patch_settings_and_network(main, models)
    base_coder = importlib.import_module("aider.coders.base_coder")
    _patch_model_calls(models, base_coder)
    _patch_coder(base_coder)
    _patch_io(importlib.import_module("aider.io"))
    _patch_commands(importlib.import_module("aider.commands"))
    emit("start", aider_version=getattr(aider, "__version__", None), python=sys.version.split()[0])
    try:
        code = main.main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    code = int(code or 0)
    emit("exit", code=code)
    return code


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
