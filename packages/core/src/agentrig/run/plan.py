"""The run plan: how every problem of a run is run, parsed and resolved once.

:func:`build_plan` is the one builder, shared by ``agentrig run`` and
:func:`agentrig.run_task`: it parses the pass policy and the thinking
settings, resolves the model and its credential, fills in the catalog's
settings for the agent, and checks what can be checked before anything
starts. Its :class:`RunPlan` is frozen and typed, and values stay parsed (a
:class:`~agentrig.evaluation.policy.PassPolicy`, a
:class:`~agentrig.model_definition.ThinkingPreset`, a resolved
:class:`~agentrig.model_definition.ModelDefinition`). A
:class:`~agentrig.run.job.ProblemJob` is this plan plus the problem, the
attempt and what is already recorded.

A plan crosses process boundaries as JSON (the ``--jobs`` pool, a Ray
cluster) and pickles. The credential never does: it is left out of every
dump, and :meth:`RunPlan.credential_here` reads it again from the environment
of the process that runs the problem, as the model's provider defines it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentrig.boundary import shorten
from agentrig.credentials import ProviderCredential
from agentrig.evaluation.policy import PassPolicy
from agentrig.llm.cache import ModelCallCache
from agentrig.model_definition import ModelDefinition, ThinkingPreset
from agentrig.readback import ReadbackLimits
from agentrig.run.evaluation import DEFAULT_TEST_TIMEOUT
from agentrig.run.fork import ForkPlan
from agentrig.run.retries import RetryPolicy

if TYPE_CHECKING:
    from agentrig.agents.interface import AgentConfigBase, AgentContext
    from agentrig.run.records import RunSettings


class VerifierOptions(BaseModel):
    """The ``verifier.KEY=VALUE`` overrides: what a task's own verifier may take from the host."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    allow_env: list[str] = Field(
        default_factory=list,
        description="Credential variables (OPENAI_API_KEY, ...) a task's [verifier] env may expand from the host.",
    )

    @field_validator("allow_env", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        import re

        items = [value] if isinstance(value, str) else value
        if isinstance(items, list):
            for item in items:
                if not isinstance(item, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", item):
                    raise ValueError(f"'{shorten(str(item), 60)}' is not an environment variable name")
        return items


class PlanError(ValueError):
    """A setting of the run that cannot work; one line, in the words of the command line
    (``str(error)``) or of :func:`agentrig.run_task` (:meth:`python_text`)."""

    def __init__(self, option: str | None, reason: str, value: Any = None, *, cli: str | None = None) -> None:
        """``option``: the setting's Python name (``pass_policy``; ``None``: the reason says it all);
        ``value``: what was given, when the message names it; ``cli``: the command line's own wording."""
        self.option = option
        self.reason = reason
        self.value = value
        if cli is None:
            if option is None:
                cli = reason
            else:
                flag = "--" + option.replace("_", "-")
                cli = f"{flag} {value}: {reason}" if value is not None else f"{flag}: {reason}"
        super().__init__(cli)

    def python_text(self) -> str:
        """The message naming the argument of :func:`agentrig.run_task` (``model='x': ...``)."""
        if self.option is None:
            return self.reason
        return f"{self.option}={self.value!r}: {self.reason}" if self.value is not None else f"{self.option}: {self.reason}"


class RunPlan(BaseModel):
    """How every problem of a run is run: the agent, its model, the runtime, the evaluation, the limits.

    Built once by :func:`build_plan`; frozen. ``credential`` is never dumped
    (see :meth:`credential_here`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The validated agent config (``type`` names the agent), with the catalog's settings for it filled in.
    agent_config: dict[str, Any]
    #: ``--model`` as given (``replay/FILE`` with FILE made absolute); ``None``: the agent runs without a model.
    model_id: str | None = None
    #: The model, resolved from the catalog once.
    model: ModelDefinition | None = None
    #: The provider's credential read where the plan was built; left out of every dump.
    credential: ProviderCredential | None = Field(default=None, exclude=True)
    runtime: str = "local"
    #: ``--image``: the container image the problems run in (``None``: the runtime's own, or the task's).
    image: str | None = None
    #: The agent's own image (built from its ``docker_template`` by :func:`~agentrig.run.runner.prepare`).
    agent_image: str | None = None
    runtime_options: dict[str, Any] = Field(default_factory=dict)
    #: ``--rebuild``: build the images agentrig builds again instead of reusing cached ones.
    rebuild: bool = False
    #: ``--pass-policy``: wins over the format's and the problem's own.
    pass_policy: PassPolicy | None = None
    #: The run's ``--reset-context``; an agent config's own ``reset_context`` wins.
    reset_context: bool = False
    thinking: ThinkingPreset | None = None
    thinking_max_tokens: int | None = None
    attempts: int = Field(default=1, ge=1)
    verbose: bool = False
    #: ``--test-timeout``: seconds a test command may take when its problem sets no limit.
    test_timeout: float = DEFAULT_TEST_TIMEOUT
    #: ``--test-session-timeout``: a cap on every test command (``None``: none).
    test_session_timeout: float | None = None
    #: ``-c verifier.KEY=VALUE``: what a task's verifier may take from the host.
    verifier: VerifierOptions = Field(default_factory=VerifierOptions)
    #: ``-c readback.KEY=VALUE``: how much one copy back from a container or workspace may hold.
    readback: ReadbackLimits = Field(default_factory=ReadbackLimits)
    #: ``--cache``: the model-call cache every problem's model clients use (``None``: none).
    model_cache: ModelCallCache | None = None
    #: ``--retries N`` and its backoff: a checkpoint that ended in a model or infrastructure error is tried again.
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    #: ``--from RUN/PROBLEM/CHECKPOINT``: where a forked run starts (:mod:`agentrig.run.fork`; ``None``: not a fork).
    fork: ForkPlan | None = None
    #: ``-c metrics=[...]``: the code-quality metrics computed after each checkpoint's evaluation into its
    #: ``quality.json``; ``None``: the problem format's default (every installed metric for ``slopcode``).
    metrics: list[str] | None = None

    def metrics_for(self, problem_format: str) -> list[str]:
        """The metrics to compute on a problem of ``problem_format`` (``-c metrics``, else the format's default)."""
        if self.metrics is not None:
            return list(self.metrics)
        if problem_format != "slopcode":
            return []
        from agentrig.metrics.compute import metric_names

        return metric_names(None)

    def agent_config_model(self) -> AgentConfigBase:
        """The agent config as its own type (the class its plugin declares)."""
        from agentrig.agents.interface import get_agent_config_cls

        return get_agent_config_cls(self.agent_config["type"]).model_validate(self.agent_config)

    @property
    def session_image(self) -> str | None:
        """The image a problem's session runs: the agent's own when it has one, else ``--image``."""
        return self.agent_image or self.image

    def credential_here(self) -> ProviderCredential | None:
        """The model's credential in this process: the plan's own, or (a plan that came over a process
        boundary without it) read from this process's environment."""
        if self.credential is not None or self.model is None or self.model.provider == "replay":
            return self.credential
        from agentrig.credentials import resolve_credential

        return resolve_credential(self.model.provider)

    def agent_context(
        self, problem_name: str, model: ModelDefinition | None = None, credential: ProviderCredential | None = None
    ) -> AgentContext:
        """The :class:`~agentrig.agents.interface.AgentContext` an agent of this plan is built with, for ``problem_name``
        (``model`` / ``credential``: instead of the plan's, e.g. a replay resumed mid-way)."""
        from agentrig.agents.interface import AgentContext

        return AgentContext(
            model=model or self.model,
            credential=credential if credential is not None else self.credential_here(),
            problem_name=problem_name,
            verbose=self.verbose,
            image=self.session_image,
            thinking_preset=self.thinking,
            thinking_max_tokens=self.thinking_max_tokens,
            runtime=self.runtime,
        )

    def settings(self) -> RunSettings:
        """The run settings ``run.json`` records (``--resume`` compares them)."""
        from agentrig.run.records import RunSettings

        return RunSettings(
            reset_context=self.reset_context,
            thinking=self.thinking.value if self.thinking else None,
            thinking_max_tokens=self.thinking_max_tokens,
            attempts=self.attempts if self.attempts > 1 else None,
        )


def model_id(model: str | None) -> str | None:
    """``--model`` as recorded: ``replay/FILE`` (or ``replay:FILE``, as ``show`` spells it) as ``replay/`` and FILE
    made absolute, so ``--resume`` works from any directory."""
    for prefix in ("replay/", "replay:"):
        if model and model.startswith(prefix):
            return "replay/" + str(Path(model.removeprefix(prefix)).resolve())
    return model


def _pass_policy(text: str | None) -> PassPolicy | None:
    from agentrig.evaluation.policy import PolicyError

    if text is None:
        return None
    try:
        return PassPolicy.parse(text)
    except PolicyError as exc:
        raise PlanError("pass_policy", str(exc)) from None


def _thinking(preset: str | ThinkingPreset | None, max_tokens: int | None) -> ThinkingPreset | None:
    try:
        thinking = ThinkingPreset(preset) if preset else None
    except ValueError:
        raise PlanError("thinking", "one of none, low, medium, high", preset) from None
    if max_tokens is not None and max_tokens < 1024:
        raise PlanError("thinking_max_tokens", "must be at least 1024", max_tokens)
    if thinking is ThinkingPreset.NONE and max_tokens is not None:
        raise PlanError(
            "thinking_max_tokens", "needs thinking on",
            cli="--thinking-max-tokens needs thinking on: drop it or pick --thinking low|medium|high",
        )
    return thinking


def _model(name: str | None, models_dir: Path | None, agent: str, needs_model: bool | None, given: str | None) -> tuple[Any, Any]:
    """The model and its credential, resolved here and nowhere else (``None, None``: no model); ``given``:
    the name as the user wrote it, for messages."""
    if not name:
        if needs_model is not True:  # False, or not declared: a model is optional
            return None, None
        raise PlanError(
            "model", "required",
            cli=f"--model is required by agent '{agent}': PROVIDER/MODEL (e.g. openai/gpt-4o-mini) or replay/FILE.jsonl",
        )
    from agentrig.catalog import resolve_model
    from agentrig.credentials import resolve_credential

    try:
        model = resolve_model(name, models_dir=models_dir)
        if model.provider == "replay":
            if not Path(model.name).is_file():
                raise ValueError(f"replay file '{model.name}' does not exist")
            _check_replay_file(model)
            return model, None
        # a missing credential is not an error here: a local server may need none, and the
        # model client names the variable to set when one is needed
        return model, resolve_credential(model.provider)
    except PlanError:
        raise
    except Exception as exc:  # the catalog's and credentials' errors are one-line messages
        raise PlanError("model", str(exc), given) from None


def _check_replay_file(model: ModelDefinition) -> None:
    """A ``replay/FILE`` model's file read through now (size, UTF-8, one recorded reply a line), before any
    run directory exists; the error names the file and line."""
    from agentrig.llm.errors import ConfigurationError
    from agentrig.llm.replay import load_replay

    try:
        load_replay(model.name)
    except ConfigurationError as exc:
        raise PlanError("model", exc.message, cli=f"--model: {exc.message}") from None


def _timeouts(test_timeout: float, test_session_timeout: float | None) -> None:
    from agentrig.boundary import BoundaryError, positive_finite

    try:
        positive_finite(test_timeout, "--test-timeout")
        if test_session_timeout is not None:
            positive_finite(test_session_timeout, "--test-session-timeout")
    except BoundaryError as exc:
        raise PlanError(None, str(exc)) from None


def build_plan(
    agent_config: AgentConfigBase,
    *,
    model: str | None = None,
    models_dir: Path | None = None,
    needs_model: bool | None = True,
    runtime: str = "local",
    image: str | None = None,
    runtime_options: dict[str, Any] | None = None,
    rebuild: bool = False,
    pass_policy: str | None = None,
    reset_context: bool = False,
    thinking: str | ThinkingPreset | None = None,
    thinking_max_tokens: int | None = None,
    attempts: int = 1,
    verbose: bool = False,
    test_timeout: float = DEFAULT_TEST_TIMEOUT,
    test_session_timeout: float | None = None,
    verifier_allow_env: Sequence[str] = (),
    model_cache: ModelCallCache | None = None,
    retries: int = 0,
    retry_backoff: float = 5.0,
    retry_backoff_max: float = 300.0,
    metrics: Sequence[str] | None = None,
) -> RunPlan:
    """The run's plan: every value parsed, the model and its credential resolved, the catalog's settings
    for the agent filled in (``agent_specific``). ``needs_model``: the agent's spec's (``True``: a missing
    ``model`` is an error). Raises :class:`PlanError` naming the setting to fix."""
    from agentrig.run.agent_config import AgentConfigError, apply_model_settings

    _timeouts(test_timeout, test_session_timeout)
    retry = _retry_policy(retries, retry_backoff, retry_backoff_max)
    policy = _pass_policy(pass_policy)
    preset = _thinking(thinking, thinking_max_tokens)
    recorded = model_id(model)
    definition, credential = _model(recorded, models_dir, agent_config.type, needs_model, model)
    try:
        agent_config = apply_model_settings(agent_config, definition)
    except AgentConfigError as exc:
        raise PlanError(None, str(exc)) from None
    return RunPlan(
        agent_config=agent_config.model_dump(mode="json"),
        model_id=recorded if definition is not None else None,
        model=definition,
        credential=credential,
        runtime=runtime,
        image=image,
        runtime_options=dict(runtime_options or {}),
        rebuild=rebuild,
        pass_policy=policy,
        reset_context=reset_context,
        thinking=preset,
        thinking_max_tokens=thinking_max_tokens,
        attempts=attempts,
        verbose=verbose,
        test_timeout=test_timeout,
        test_session_timeout=test_session_timeout,
        verifier=VerifierOptions(allow_env=list(verifier_allow_env)),
        model_cache=model_cache,
        retry=retry,
        metrics=None if metrics is None else list(metrics),
    )


def _retry_policy(retries: int, base: float, cap: float) -> RetryPolicy:
    """``--retries`` and its backoff, checked: a count from 0 to 100, waits from 0 s (finite)."""
    import math

    from pydantic import ValidationError

    if not isinstance(retries, int) or isinstance(retries, bool) or not 0 <= retries <= 100:
        raise PlanError("retries", "must be a whole number from 0 to 100", retries)
    for option, value in (("retry_backoff", base), ("retry_backoff_max", cap)):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
            raise PlanError(option, "must be a number of seconds, 0 or more", value)
    try:
        return RetryPolicy(retries=retries, base=base, cap=cap)
    except ValidationError as exc:
        field = str(exc.errors()[0]["loc"][0])
        option = {"base": "retry_backoff", "cap": "retry_backoff_max"}.get(field, "retries")
        raise PlanError(option, exc.errors()[0]["msg"].lower(), {"base": base, "cap": cap}.get(field, retries)) from None


__all__ = ["PlanError", "RunPlan", "VerifierOptions", "build_plan", "model_id"]
