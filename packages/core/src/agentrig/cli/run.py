"""``agentrig run PROBLEM... --agent NAME|config.yaml``: run an agent on problems, record everything."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from agentrig.cli.exits import ExitStatus, checkpoints_status
from agentrig.cli.output import CLIError, print_table
from agentrig.cli.test_options import add_test_time_options


def add_parser(subparsers: Any) -> None:
    """Add the ``run`` command."""
    parser = subparsers.add_parser(
        "run",
        help="run an agent on one or more problems",
        description="Run an agent on multi-checkpoint problems; each checkpoint is tested, "
        "snapshotted and recorded under --output.",
    )
    _add_problem_arguments(parser)
    _add_agent_arguments(parser)
    _add_run_arguments(parser)
    add_test_time_options(parser, test_timeout_default=600.0)
    _add_conversation_arguments(parser)
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument("--quiet", "-q", action="store_true", help="no progress, only the summary")
    loudness.add_argument("--verbose", "-v", action="store_true", help="one line per agent step")
    from agentrig.cli.cache import add_run_options

    add_run_options(parser)
    from agentrig.cli import fork_options

    fork_options.add_run_options(parser)
    parser.set_defaults(handler=run_command)


def _add_problem_arguments(parser: argparse.ArgumentParser) -> None:
    """Which problems run, and what passes a checkpoint."""
    parser.add_argument(
        "problems", nargs="+", metavar="PROBLEM",
        help="problem directory (problem.yaml, a SlopCodeBench problem, ...), a dataset (a directory of problems),"
        " or dataset:NAME[@VERSION] (installed with a distribution; see `agentrig datasets list`)",
    )
    parser.add_argument("--format", dest="problem_format", help="the problems' format (default: detected; see `agentrig problems list`)")
    parser.add_argument(
        "--problem", dest="include", action="append", default=[], metavar="GLOB",
        help="run only the problems whose name or relative path matches GLOB (repeatable)",
    )
    parser.add_argument(
        "-x", "--exclude", dest="exclude", action="append", default=[], metavar="GLOB",
        help="skip the problems whose name or relative path matches GLOB (repeatable)",
    )
    parser.add_argument(
        "--pass-policy", help="what passes a checkpoint: all (every test), core (every Core test) or score>=X "
        "(default: the format's or problem's, else all)",
    )


def _add_agent_arguments(parser: argparse.ArgumentParser) -> None:
    """Which agent runs, on which model, where its commands run."""
    parser.add_argument("--agent", required=True, help="agent type (see `agentrig agents list`) or an agent config YAML file")
    parser.add_argument(
        "--model", help="PROVIDER/MODEL or an alias from the catalog; replay/FILE.jsonl replays recorded replies "
        "(required by agents that use a model)",
    )
    parser.add_argument(
        "--runtime",
        help="where commands run: local (the default), docker (the default for problems that bring their own image: "
        "Harbor, Terminal-Bench), or a plugin's runtime",
    )
    parser.add_argument("--image", help="container image for --runtime docker")
    parser.add_argument(
        "--rebuild", action="store_true",
        help="--runtime docker: build the images agentrig builds (a task's from its Dockerfile, the agent's from its "
        "docker_template) again, without Docker's layer cache, instead of reusing the cached ones",
    )
    parser.add_argument("--models-dir", type=Path, help="a directory of model catalog YAML files, over the shipped catalog")


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The run directory, resuming it, config overrides, and how many problems and attempts run where."""
    parser.add_argument("--output", "-o", type=Path, help="run directory (default: runs/<timestamp>)")
    parser.add_argument("--resume", action="store_true", help="continue the run in --output: finished checkpoints are kept")
    parser.add_argument(
        "--retry-errors", action="store_true",
        help="with --resume: also redo checkpoints that ended in an error (a model or runtime failure, a test that "
        "could not run) instead of a verdict, and the checkpoints after them",
    )
    parser.add_argument(
        "-c", "--config", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
        help="override one agent config field; dotted keys reach nested ones (cost_limits.step_limit=20); "
        "runtime.KEY=VALUE sets a runtime option (runtime.network=host, runtime.mem_limit=2g); "
        "executor.KEY=VALUE an executor option (executor.address=HOST:PORT); "
        "metrics=[NAME,...] computes code-quality metrics into each checkpoint's quality.json (default: every "
        "installed metric for slopcode problems, none otherwise; metrics=[]: none); "
        "verifier.allow_env=[NAME,...] lets a task's verifier take these credentials from the host "
        "(never otherwise: OPENAI_API_KEY, ANTHROPIC_API_KEY, any *_API_KEY); readback.max_files=N and "
        "readback.max_bytes=N bound each copy back from a container or workspace (verifier logs, snapshots; "
        "default 10000 files, 1 GiB)",
    )
    parser.add_argument(
        "--retries", type=int, default=0, metavar="N",
        help="try a checkpoint again, up to N times, when it ended in a model error (5xx, 429, a timeout, after "
        "the client's own retries) or an infrastructure failure (never a verdict or a limit); each failed try is "
        "kept in <checkpoint>/tries/<n>/ (default 0)",
    )
    parser.add_argument(
        "--retry-backoff", type=float, default=5.0, metavar="SECONDS",
        help="--retries: seconds before the first retry, doubled for each next one, with jitter (default 5)",
    )
    parser.add_argument(
        "--retry-backoff-max", type=float, default=300.0, metavar="SECONDS",
        help="--retries: the longest wait between two tries (default 300)",
    )
    parser.add_argument("--jobs", "-j", type=int, default=1, help="problems to run at once, each in its own process (default 1)")
    parser.add_argument(
        "--attempts", type=int, default=1, metavar="K",
        help="run each problem K times, each attempt in its own workspace and <problem>/attempt_<i>/ "
        "directory; the summary and run.json report pass@1 and pass@K (default 1)",
    )
    parser.add_argument(
        "--executor", default="local", metavar="NAME",
        help=(
                "where problems run: local (default: this machine, --jobs at once) "
                "or an installed plugin's executor (`agentrig plugins` lists them)"
            ),
    )


def _add_conversation_arguments(parser: argparse.ArgumentParser) -> None:
    """The agent's conversation across checkpoints, and its thinking."""
    context = parser.add_mutually_exclusive_group()
    context.add_argument(
        "--reset-context", dest="reset_context", action="store_true", default=None,
        help="start every checkpoint with a fresh conversation",
    )
    context.add_argument(
        "--keep-context", dest="reset_context", action="store_false",
        help="continue the conversation from checkpoint to checkpoint (the default); "
        "an agent config's own reset_context overrides either",
    )
    parser.add_argument(
        "--thinking", choices=["none", "low", "medium", "high"], metavar="PRESET",
        help="extended thinking / reasoning effort: none, low, medium, high (default: the model's own)",
    )
    parser.add_argument(
        "--thinking-max-tokens", type=int, metavar="N", help="thinking budget in tokens (at least 1024)"
    )


def _take_overrides(overrides: list[str], prefix: str) -> tuple[list[str], list[tuple[str, Any]]]:
    """The ``PREFIX.KEY=VALUE`` overrides parsed as ``(KEY, value)`` pairs, and the others unparsed."""
    from agentrig.run.agent_config import AgentConfigError, parse_override

    rest: list[str] = []
    taken: list[tuple[str, Any]] = []
    for text in overrides:
        if not text.startswith(f"{prefix}."):
            rest.append(text)
            continue
        try:
            key, value = parse_override(text)
        except AgentConfigError as exc:
            raise CLIError(str(exc), status=2) from None
        taken.append((key.removeprefix(f"{prefix}."), value))
    return rest, taken


def _split_overrides(overrides: list[str]) -> tuple[list[str], dict[str, Any]]:
    """Agent config overrides, and the ``runtime.KEY=VALUE`` ones as runtime options."""
    agent, taken = _take_overrides(overrides, "runtime")
    runtime: dict[str, Any] = {}
    for option, value in taken:
        if not option or "." in option:
            raise CLIError(f"-c runtime.{option}: runtime options are runtime.KEY=VALUE (e.g. runtime.network=host)", status=2)
        runtime[option] = value
    return agent, runtime


def _executor_overrides(overrides: list[str]) -> tuple[list[str], dict[str, Any]]:
    """The ``executor.KEY=VALUE`` overrides as executor options (dotted keys nest), and the others."""
    from agentrig.run.agent_config import apply_override

    rest, taken = _take_overrides(overrides, "executor")
    options: dict[str, Any] = {}
    for key, value in taken:
        apply_override(options, key, value)
    return rest, options


def _metrics_override(overrides: list[str]) -> tuple[list[str], list[str] | None]:
    """``-c metrics=[NAME,...]`` (the code-quality metrics after each checkpoint; ``[]``: none) checked
    against the installed metrics, and the other overrides; ``None`` when not given (the format's default)."""
    from agentrig.errors import UnknownPluginError
    from agentrig.metrics.compute import metric_names
    from agentrig.run.agent_config import AgentConfigError, parse_override

    rest = [text for text in overrides if text.partition("=")[0].strip() != "metrics"]
    given = [text for text in overrides if text.partition("=")[0].strip() == "metrics"]
    if not given:
        return rest, None
    try:
        _, value = parse_override(given[-1])
    except AgentConfigError as exc:
        raise CLIError(str(exc), status=2) from None
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise CLIError("-c metrics: a list of metric names, e.g. metrics=[size,lint] (metrics=[]: none)", status=2)
    try:
        return rest, metric_names(names)
    except UnknownPluginError as exc:
        raise CLIError(str(exc), status=2) from None


def _readback_overrides(overrides: list[str]) -> tuple[list[str], Any]:
    """The ``readback.KEY=VALUE`` overrides as :class:`~agentrig.readback.ReadbackLimits`, and the others."""
    from pydantic import ValidationError

    from agentrig.readback import ReadbackLimits

    rest, taken = _take_overrides(overrides, "readback")
    try:
        return rest, ReadbackLimits.model_validate(dict(taken))
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"][:1])
        message = "unknown read-back limit (known: max_files, max_bytes)" if error["type"] == "extra_forbidden" else error["msg"]
        raise CLIError(f"-c readback.{field}: {message}", status=2) from None


def _check_metric_tools(asked: list[str] | None, problems: list[Any]) -> None:
    """The tools of the metrics the run computes, before anything is made: ``-c metrics=[...]`` naming one whose
    tool is missing is a usage error naming the tool and its install command; the slopcode problems' default
    (every installed metric) gets a warning line instead, and runs the others."""
    from agentrig.metrics.compute import metric_names
    from agentrig.metrics.preflight import unavailable_line, unavailable_metrics

    if asked is not None:
        missing = unavailable_metrics(asked)
        if missing:
            raise CLIError(f"-c metrics: {unavailable_line(missing)}", status=2)
        return
    if not any(problem.format == "slopcode" for problem in problems):
        return
    missing = unavailable_metrics(metric_names(None))
    if missing:
        from agentrig.cli.output import warning_line

        warning_line(
            f"code-quality metrics of slopcode problems that cannot run here (recorded as failed): {unavailable_line(missing)}"
        )


def _verifier_overrides(overrides: list[str]) -> tuple[list[str], Any]:
    """The ``verifier.KEY=VALUE`` overrides as :class:`VerifierOptions`, and the others."""
    from pydantic import ValidationError

    from agentrig.run.plan import VerifierOptions

    rest, taken = _take_overrides(overrides, "verifier")
    options: dict[str, Any] = dict(taken)
    try:
        return rest, VerifierOptions.model_validate(options)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"][:1])
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown verifier option (known: allow_env)"
        raise CLIError(f"-c verifier.{field}: {message}", status=2) from None


def _say_host_variables(problems: list[Any], allowed: list[str]) -> None:
    """One line on stderr naming the host variables the problems' own files ask for (Harbor's
    ``${VAR}``), and which of them are credentials withheld unless allowed."""
    from agentrig.credentials import is_credential_variable
    from agentrig.formats.resolve import get_format

    asked: dict[str, list[str]] = {}
    for problem in problems:
        for name in get_format(problem.format).host_variables(problem):
            asked.setdefault(name, []).append(problem.name)
    if not asked:
        return
    shown = ", ".join(f"{name} ({', '.join(tasks[:3])}{', ...' if len(tasks) > 3 else ''})" for name, tasks in sorted(asked.items()))
    withheld = [name for name in sorted(asked) if is_credential_variable(name) and name not in allowed]
    note = (
        f"; credentials withheld: {', '.join(withheld)} (allow with -c verifier.allow_env=[{','.join(withheld)}])"
        if withheld else ""
    )
    print(f"agentrig: tasks ask for host environment variables: {shown}{note}", file=sys.stderr)


def _open_executor(args: argparse.Namespace, options: dict[str, Any]) -> Any:
    """Build and connect ``--executor`` before anything is written: a cluster that is not there stops here."""
    from agentrig.executors.interface import ExecutorError
    from agentrig.executors.resolve import create_executor

    try:
        executor = create_executor(args.executor, options, jobs=args.jobs)
    except ExecutorError as exc:
        raise CLIError(str(exc), status=2) from None
    try:
        executor.open()
    except ExecutorError as exc:
        raise CLIError(f"--executor {args.executor}: {exc}") from None
    return executor


def _agent_config(args: argparse.Namespace, overrides: list[str], registry: Any) -> Any:
    """``--agent`` with its ``-c`` overrides, validated by its config class."""
    from agentrig.agents.interface import get_agent_config_cls
    from agentrig.errors import PluginError, UnknownAgentError
    from agentrig.run.agent_config import AgentConfigError, build_agent_config

    try:
        return build_agent_config(args.agent, overrides, lambda name: get_agent_config_cls(name, registry))
    except UnknownAgentError as exc:
        raise CLIError(f"--agent: {exc}", status=2) from None
    except AgentConfigError as exc:
        raise CLIError(str(exc), status=2) from None
    except PluginError as exc:
        raise CLIError(str(exc)) from None


def _check_models_dir(models_dir: Path) -> None:
    """``--models-dir``: an existing directory whose every catalog file reads as one (checked whether or not
    the agent uses a model, so a mistyped directory is never silently ignored)."""
    from agentrig.catalog import CatalogError, load_catalog

    if not models_dir.exists():
        raise CLIError(f"--models-dir {models_dir}: no such directory", status=2)
    if not models_dir.is_dir():
        raise CLIError(f"--models-dir {models_dir}: not a directory", status=2)
    try:
        load_catalog(models_dir)
    except CatalogError as exc:
        raise CLIError(f"--models-dir {models_dir}: {exc}", status=2) from None
    except OSError as exc:
        raise CLIError(f"--models-dir {models_dir}: {exc.strerror or exc}", status=2) from None


def _build_plan(args: argparse.Namespace, config: Any, needs_model: bool | None, agent_overrides: list[str],
                runtime_options: dict[str, Any], verifier_options: Any) -> Any:
    """The run's plan from the command line (:func:`agentrig.run.plan.build_plan`): a setting that cannot
    work is a usage error naming its option."""
    from agentrig.cli.cache import cache_from_args
    from agentrig.run.plan import PlanError, build_plan

    model_cache = cache_from_args(args)
    try:
        return build_plan(
            config,
            model=args.model,
            models_dir=args.models_dir,  # checked by _check_models_dir already
            needs_model=needs_model,
            runtime=args.runtime,
            image=args.image,
            runtime_options=runtime_options,
            rebuild=args.rebuild,
            pass_policy=args.pass_policy,
            reset_context=bool(args.reset_context),
            thinking=args.thinking,
            thinking_max_tokens=args.thinking_max_tokens,
            attempts=args.attempts,
            verbose=args.verbose,
            test_timeout=args.test_timeout,
            test_session_timeout=args.test_session_timeout,
            verifier_allow_env=verifier_options.allow_env,
            model_cache=model_cache,
            retries=args.retries,
            retry_backoff=args.retry_backoff,
            retry_backoff_max=args.retry_backoff_max,
            metrics=args.metrics,
        )
    except PlanError as exc:
        raise CLIError(str(exc), status=2) from None


def _preflight(plan: Any) -> None:
    """The agent's own checks of its model settings (endpoint, credential, options): no call, nothing created."""
    import dataclasses

    from agentrig.agents.interface import Agent
    from agentrig.errors import AgentError

    try:
        context = dataclasses.replace(plan.agent_context("preflight"), verbose=False)
        agent = Agent.from_config(plan.agent_config_model(), context)
        agent.preflight()
    except AgentError as exc:
        raise CLIError(str(exc), status=2) from None


def _brings_image(format_name: str) -> bool:
    """Whether problems of this format bring their own image (built from the task, no --image needed)."""
    from agentrig.formats.resolve import get_format

    return get_format(format_name).brings_image


def _choose_runtime(args: argparse.Namespace, problems: list[Any]) -> None:
    """``--runtime`` when given, else ``local``, or ``docker`` (one line says so) when problems bring their own
    image (a Harbor or Terminal-Bench task runs in its container); ``--runtime local`` with such problems is
    refused before anything is made."""
    bringing = sorted({p.format for p in problems if _brings_image(p.format)})
    if args.runtime is None:
        args.runtime = "docker" if bringing else "local"
        if bringing and not args.quiet:
            print(f"agentrig: {' and '.join(bringing)} problems run in their own containers: --runtime docker", file=sys.stderr)
    elif args.runtime == "local" and bringing:
        raise CLIError(
            f"{' and '.join(bringing)} problems run in containers of their own images, not on --runtime local: "
            "pass --runtime docker (or leave --runtime out)",
            status=2,
        )


def run_command(args: argparse.Namespace) -> int:
    """Check every input, run the problems, print the summary; the exit status is
    :func:`run_status`'s, 130 after Ctrl-C, 143 after SIGTERM."""
    from agentrig.cli.agents import loaded_registry
    from agentrig.model_definition import ThinkingPreset
    from agentrig.run.problems import ProblemError, load_runnable_problems
    from agentrig.run.runner import RunRequest

    if args.jobs < 1:
        raise CLIError(f"--jobs {args.jobs}: must be at least 1", status=2)
    if args.attempts < 1:
        raise CLIError(f"--attempts {args.attempts}: must be at least 1", status=2)
    if args.retry_errors and not args.resume:
        raise CLIError("--retry-errors redoes checkpoints of an existing run: add --resume and its --output", status=2)
    if args.models_dir is not None:
        _check_models_dir(args.models_dir)
    try:
        problems, unloadable = load_runnable_problems(args.problems, args.problem_format, args.include, args.exclude)
    except ProblemError as exc:
        raise CLIError(str(exc), status=2) from None
    _choose_runtime(args, problems)
    registry = loaded_registry()
    other_overrides, executor_options = _executor_overrides(args.overrides)
    other_overrides, verifier_options = _verifier_overrides(other_overrides)
    other_overrides, readback = _readback_overrides(other_overrides)
    other_overrides, args.metrics = _metrics_override(other_overrides)
    _check_metric_tools(args.metrics, problems)
    _say_host_variables(problems, verifier_options.allow_env)
    agent_overrides, runtime_options = _split_overrides(other_overrides)
    config = _agent_config(args, agent_overrides, registry)
    _check_runtime(args, config, problems, runtime_options, registry)
    _check_tools(args.runtime, problems, runtime_options)
    _check_images(args, problems)
    spec, plugin = registry.agent_spec(config.type)
    plan = _build_plan(args, config, spec.needs_model, agent_overrides, runtime_options, verifier_options)
    plan = plan.model_copy(update={"readback": readback})
    from agentrig.cli.fork_options import fork_plan

    plan = fork_plan(args, plan, problems, registry)
    if plan.thinking not in (None, ThinkingPreset.NONE) and plan.model is not None and not plan.model.supports_thinking:
        from agentrig.cli.output import warning_line

        warning_line(
            f"--thinking {plan.thinking.value}: the catalog says {plan.model.label} does not think; no reasoning options are sent"
        )
    _preflight(plan)
    plan = _with_bundle(args, plan, config, problems)
    request = RunRequest(
        plan=plan,
        problems=[p.path for p in problems],
        format=args.problem_format,
        output=args.output,
        resume=args.resume,
        retry_errors=args.retry_errors,
        reuse_cache=not args.no_cache,
        jobs=args.jobs,
        executor=args.executor,
        executor_options=executor_options,
    )
    if unloadable:
        _say_unloadable(unloadable)
    executor = _open_executor(args, executor_options)
    try:
        status = _run_prepared(args, request, _identity(args, plan, problems, plugin), plugin, executor)
    finally:
        executor.close()
    # problems that could not even be loaded were asked for and did not run: an error
    if unloadable and status in (ExitStatus.OK, ExitStatus.FAILED):
        return ExitStatus.ERROR
    return status


def _check_runtime(
    args: argparse.Namespace, config: Any, problems: list[Any], runtime_options: dict[str, Any], registry: Any
) -> None:
    """``--runtime``, ``--image``, ``--rebuild`` and the ``runtime.*`` options, checked before anything starts."""
    runtimes = registry.runtime_specs()
    if args.runtime not in runtimes:
        raise CLIError(f"--runtime {args.runtime}: unknown runtime (available: {', '.join(sorted(runtimes))})", status=2)
    if args.image and args.runtime == "local":
        raise CLIError("--image needs a container runtime (--runtime docker)", status=2)
    if args.rebuild and args.runtime != "docker":
        raise CLIError("--rebuild builds container images again: it needs --runtime docker", status=2)
    from agentrig.runtime.errors import RuntimeSetupError
    from agentrig.runtime.resolve import check_runtime_options

    try:
        check_runtime_options(args.runtime, {**runtime_options, **({"image": args.image} if args.image else {})})
    except RuntimeSetupError as exc:
        # a Harbor task's image is built from its Dockerfile when it runs: no --image needed then
        if not ("'image': Field required" in str(exc) and problems and all(_brings_image(p.format) for p in problems)):
            hint = " (pass --image IMAGE)" if "'image'" in str(exc) else ""
            raise CLIError(f"{exc}{hint}", status=2) from None
    if getattr(config, "docker_template", None) and args.runtime == "docker" and not _runs_bundle(args, config, problems):
        own = sorted({p.format for p in problems if _brings_image(p.format)})
        if own:
            raise CLIError(
                f"agent '{config.type}' runs in its own image (docker_template), which is not built over the "
                f"images {', '.join(own)} problems bring: pick an agent that has a bundle or runs in any image",
                status=2,
            )


def _check_tools(runtime: str, problems: list[Any], runtime_options: dict[str, Any]) -> None:
    """Every program the problems' formats need under ``runtime`` (:meth:`ProblemFormat.required_tools`)
    is on the ``PATH`` the runtime's commands get; else :class:`CLIError` (exit 2) naming the fix."""
    from agentrig.formats.resolve import get_format

    env = runtime_options.get("env")
    path = str((env.get("PATH") if isinstance(env, dict) else None) or os.environ.get("PATH", os.defpath))
    missing: dict[str, tuple[str, str]] = {}
    for problem in problems:
        for tool, fix in get_format(problem.format).required_tools(problem, runtime).items():
            if tool not in missing and shutil.which(tool, path=path) is None:
                missing[tool] = (problem.format, fix)
    if missing:
        formats = sorted({fmt for fmt, _ in missing.values()})
        fixes = list(dict.fromkeys(fix for _, fix in missing.values()))
        raise CLIError(
            f"{', '.join(formats)} problems need {' and '.join(missing)} to evaluate each checkpoint, not found on "
            f"the PATH of --runtime {runtime}: {'; '.join(fixes)}",
            status=2,
        )


def _check_images(args: argparse.Namespace, problems: list[Any]) -> None:
    """``--runtime docker``: every image the run needs (``--image``, the images the problems name) present
    locally before anything is made; one line naming each absent one and how to get it offline, exit 2."""
    if args.runtime != "docker":
        return
    from agentrig.formats.resolve import get_format
    from agentrig.problem import ProblemError
    from agentrig.runtime.errors import DockerUnavailableError, ImageNotFoundError
    from agentrig.runtime.images import RequiredImage, check_images_present

    required = [RequiredImage(image=args.image, named_by="--image")] if args.image else []
    try:
        for problem in problems:
            required += get_format(problem.format).required_images(problem)
        check_images_present(required)
    except (ImageNotFoundError, ProblemError) as exc:
        raise CLIError(str(exc), status=2) from None
    except DockerUnavailableError as exc:
        raise CLIError(f"--runtime docker: {exc}") from None


def _runs_bundle(args: argparse.Namespace, config: Any, problems: list[Any]) -> bool:
    """Whether the agent runs its bundle (:mod:`agentrig.run.agent_bundle`) in the problems' own containers:
    a CLI agent with a bundle, ``--runtime docker``, and problems that bring their image (or no
    ``docker_template`` over ``--image``: ``-c docker_template=``, or a bundle of one's own)."""
    from agentrig.run.agent_bundle import recipe_of

    if args.runtime != "docker" or recipe_of(config.type) is None:
        return False
    return bool(
        getattr(config, "bundle", None) or not getattr(config, "docker_template", None)
        or any(_brings_image(p.format) for p in problems)
    )


def _with_bundle(args: argparse.Namespace, plan: Any, config: Any, problems: list[Any]) -> Any:
    """``plan`` with the agent's bundle bound into the problems' containers (and no agent image), after
    checking that it runs in each problem's image and preparing it (:mod:`agentrig.run.agent_bundle`)."""
    from agentrig.formats.resolve import get_format
    from agentrig.run.agent_bundle import AgentBundleError, bundle_mount, recipe_of
    from agentrig.runtime.errors import RuntimeSetupError

    if not _runs_bundle(args, config, problems):
        return plan
    recipe = recipe_of(config.type)
    assert recipe is not None
    try:
        images = [get_format(p.format).session_image(p) or args.image for p in problems]
        mount = bundle_mount(
            config, recipe, [image for image in images if image],
            notify=None if args.quiet else lambda message: print(f"agentrig: {message}", file=sys.stderr, flush=True),
        )
    except (AgentBundleError, RuntimeSetupError) as exc:
        raise CLIError(str(exc), status=2) from None
    options = dict(plan.runtime_options)
    options["mounts"] = [*options.get("mounts", []), mount]
    agent_config = {**plan.agent_config, "docker_template": None}
    return plan.model_copy(update={"runtime_options": options, "agent_config": agent_config})


def _identity(args: argparse.Namespace, plan: Any, problems: list[Any], plugin: Any) -> Any:
    """What makes this run the same run for ``--resume`` (recorded in ``run.json``)."""
    from agentrig.agents.mcp import redact_mcp_servers
    from agentrig.run.records import AgentRecord, ModelRecord, RunIdentity, RuntimeRecord

    model = plan.model
    return RunIdentity(
        agent=AgentRecord(
            type=plan.agent_config["type"], distribution=plugin.distribution, version=plugin.version,
            config=redact_mcp_servers(plan.agent_config),  # an MCP server's literal env/header values are secrets
        ),
        model=ModelRecord(id=plan.model_id, provider=model.provider, name=model.name) if model is not None else None,
        runtime=RuntimeRecord(name=plan.runtime, image=plan.image, options=plan.runtime_options),
        problems=[p.name for p in problems],
        settings=plan.settings(),
        datasets=_dataset_refs(args.problems),
        forked_from=plan.fork.record if plan.fork is not None else None,
    )


def _say_unloadable(unloadable: list[Any]) -> None:
    """One line naming the problems left out of the run because they cannot be loaded, and why."""
    from agentrig.cli.output import warning_line

    count = len(unloadable)
    what = "; ".join(f"{item.location.relative}: {item.error}" for item in unloadable)
    warning_line(f"skipping {count} problem{'s' if count > 1 else ''} that cannot be loaded (the others run): {what}")


def _dataset_refs(paths: list[str]) -> list[str]:
    """``NAME@VERSION`` of every ``dataset:`` argument (resolved already by ``load_problems``)."""
    from agentrig.datasets.resolve import find_dataset, is_dataset_ref

    return [find_dataset(p).ref for p in paths if is_dataset_ref(p)]


def _run_prepared(args: argparse.Namespace, request: Any, identity: Any, plugin: Any, executor: Any) -> int:
    """Claim the run directory, run the problems on ``executor``, print the summary."""
    from agentrig.run.agent_image import AgentImageError
    from agentrig.run.layout import RunDirectory, RunDirectoryError
    from agentrig.run.problems import ProblemError
    from agentrig.run.runner import execute, prepare

    try:
        if args.quiet:
            prepared, _lock = prepare(request, identity, plugin.distribution, notify=None)
        else:
            prepared, _lock = prepare(request, identity, plugin.distribution)
    except (RunDirectoryError, ProblemError) as exc:
        raise CLIError(str(exc), status=2) from None
    except AgentImageError as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        raise CLIError(f"--output {request.output}: {exc.strerror or exc}", status=2) from None

    from agentrig.run.progress import ProgressDisplay
    from agentrig.run.signals import install_termination_handler

    display = ProgressDisplay(verbosity=0 if args.quiet else (2 if args.verbose else 1))
    install_termination_handler()
    if prepared.up_to_date and not args.quiet:
        print(f"agentrig: every checkpoint of {prepared.directory} has finished; nothing to resume", file=sys.stderr)
    try:
        record = execute(prepared, display, tick=display.tick, executor=executor)
    except KeyboardInterrupt as exc:
        from agentrig.run.signals import interrupt_status

        display.close()
        print(
            f"agentrig: interrupted; what finished is in {prepared.directory}."
            f" Continue with: {_resume_command(args, prepared.request.plan, prepared.directory)}",
            file=sys.stderr,
        )
        return interrupt_status(exc)
    finally:
        RunDirectory(prepared.directory).unlock(_lock)
    display.close()
    print_summary(prepared.directory, record, quiet=args.quiet)
    return run_status(record, RunDirectory(prepared.directory).results())


def run_status(record: Any, lines: list[Any]) -> ExitStatus:
    """A finished run's exit status (:class:`ExitStatus`): ``ERROR`` when a problem did not complete
    or a checkpoint ended in an error, ``FAILED`` when a checkpoint failed, else ``OK``."""
    if record.status != "completed" or any(p.status != "completed" for p in record.problems.values()):
        return ExitStatus.ERROR
    return checkpoints_status((line.status, line.had_error) for line in lines)


def _resume_command(args: argparse.Namespace, plan: Any, directory: Path) -> str:
    """The command that finishes this run: the same inputs (the model and pass policy as the plan has
    them: a replay file's absolute path, the canonical policy), ``--output`` and ``--resume``."""
    words = ["agentrig", "run", *map(str, args.problems), "--agent", args.agent]
    if plan.model_id:
        from agentrig.model_definition import model_spelling

        words += ["--model", model_spelling(plan.model_id)]
    if args.problem_format:
        words += ["--format", args.problem_format]
    for glob in args.include:
        words += ["--problem", glob]
    for glob in args.exclude:
        words += ["-x", glob]
    if plan.pass_policy is not None:
        words += ["--pass-policy", str(plan.pass_policy)]
    if args.runtime != "local":
        words += ["--runtime", args.runtime]
    if args.executor != "local":
        words += ["--executor", args.executor]
    if args.image:
        words += ["--image", args.image]
    if args.models_dir:
        words += ["--models-dir", str(args.models_dir)]
    for override in args.overrides:
        words += ["-c", override]
    if args.reset_context is not None:
        words.append("--reset-context" if args.reset_context else "--keep-context")
    if args.thinking:
        words += ["--thinking", args.thinking]
    if args.thinking_max_tokens is not None:
        words += ["--thinking-max-tokens", str(args.thinking_max_tokens)]
    if args.attempts > 1:
        words += ["--attempts", str(args.attempts)]
    if plan.retry.retries:  # not part of the run's identity, but what the user asked for
        words += ["--retries", str(plan.retry.retries)]
        default = type(plan.retry)()
        if plan.retry.base != default.base:
            words += ["--retry-backoff", f"{plan.retry.base:g}"]
        if plan.retry.cap != default.cap:
            words += ["--retry-backoff-max", f"{plan.retry.cap:g}"]
    from agentrig.cli.cache import resume_words

    words += resume_words(plan.model_cache)  # as a resume without them would take them from run.json: said
    if plan.fork is not None:  # the source as the fork resolved it: absolute, so it works from any directory
        fork = plan.fork.record
        words += ["--from", str(Path(fork.run) / fork.problem / fork.checkpoint)]
    words += ["--output", str(directory), "--resume"]
    return " ".join(shlex.quote(w) for w in words)


def _money(cost: float | None, known: bool = True) -> str:
    from agentrig.formatting import money

    return money(cost if known else None)


def _tokens(count: int) -> str:
    from agentrig.formatting import tokens_text

    return tokens_text(count)


def print_summary(directory: Path, record: Any, *, quiet: bool = False) -> None:
    """The results table, the totals and where the run directory is, on stdout."""
    from agentrig.run.layout import RunDirectory

    lines = RunDirectory(directory).results()
    if not quiet:
        rows = [
            [
                line.unit,  # the problem, or problem/attempt_<i>
                line.checkpoint,
                line.status,
                f"{line.tests.passed}/{line.tests.total}" if line.tests is not None else "",
                line.stop_reason or "",
                line.steps,
                _tokens(line.tokens.total),
                _money(line.cost, line.cost_known),
                f"{line.elapsed:.1f}s",
            ]
            for line in sorted(lines, key=lambda row: (row.problem, row.attempt or 0, row.index))
        ]
        headers = ["problem", "checkpoint", "result", "tests", "stopped", "steps", "tokens", "cost", "time"]
        if not any(line.tests is not None for line in lines):  # exit-code tests only: as `agentrig show` prints it
            headers.pop(3)
            rows = [row[:3] + row[4:] for row in rows]
        if rows:
            print_table(headers, rows)
        for problem in record.problems.values():
            if problem.status != "completed":
                print(f"{problem.name}: {problem.status}" + (f": {problem.error}" if problem.error else ""))
            if problem.score is not None:  # the problem's own score (a Harbor multi-step task's reward)
                print(f"{problem.name}: score {problem.score.score:.3f} ({problem.score.rule})")
    from agentrig.report.summary import CheckpointRow, RunTotals

    # the line `agentrig show` prints, from the same rows: one count of every verdict, score and test
    print(RunTotals.of([CheckpointRow.of_line(line, line.unit, line.index + 1) for line in lines]).line())
    totals = record.totals
    if record.pass_at_k is not None:
        from agentrig.report.passk import pass_at_k_lines

        for text in pass_at_k_lines(record.pass_at_k):
            print(text)
    elif totals.problems > 1:
        print(
            f"{totals.problems} problems: {totals.problems_solved} solved, {totals.problems_partial} partial,"
            f" {totals.problems - totals.problems_solved - totals.problems_partial} unsolved"
        )
    print(f"run directory: {directory}")
