"""The core's own plugin: the ``local`` and ``docker`` runtimes, the ``local`` executor, the core's
problem formats, the ``oracle`` agent, the ``starter`` dataset, the ``openai``, ``anthropic``
and ``replay`` model providers and the Python code-quality metrics.

Registered through the ``agentrig`` entry-point group exactly as a third
party registers ``podman`` or ``k8s``; nothing here imports a runtime or a format.
"""

from __future__ import annotations

from agentrig.markers import hookimpl
from agentrig.specs import (
    AgentSpec,
    DatasetSpec,
    ExecutorSpec,
    MetricSpec,
    ModelProviderSpec,
    ProblemFormatSpec,
    RuntimeSpec,
)


@hookimpl
def agentrig_runtimes() -> list[RuntimeSpec]:
    """The core's runtimes, by import path."""
    return [
        RuntimeSpec(
            name="local",
            description="Subprocesses on this machine, in the workspace directory.",
            runtime="agentrig.runtime.local:LocalRuntime",
        ),
        RuntimeSpec(
            name="docker",
            description="One container per session, the workspace bind-mounted at /workspace.",
            runtime="agentrig.runtime.docker:DockerRuntime",
        ),
    ]


@hookimpl
def agentrig_executors() -> list[ExecutorSpec]:
    """The core's executor, by import path."""
    return [
        ExecutorSpec(
            name="local",
            description="Problems on this machine: one at a time, or --jobs N worker processes.",
            executor="agentrig.executors.local:LocalExecutor",
        )
    ]


@hookimpl
def agentrig_problem_formats() -> list[ProblemFormatSpec]:
    """The core's problem formats, by import path, in detection order."""
    return [
        ProblemFormatSpec(
            name="agentrig",
            description="A directory holding problem.yaml (prompts, test commands, optional solutions).",
            loader="agentrig.formats.native:NativeFormat",
        ),
        ProblemFormatSpec(
            name="slopcode",
            description="SlopCodeBench: config.yaml, checkpoint_N.md specs, pytest suites, solutions/checkpoint_N.",
            loader="agentrig.formats.slopcode:SlopCodeFormat",
        ),
        ProblemFormatSpec(
            name="harbor",
            description=(
                    "A Harbor task: task.toml, instruction.md, environment/Dockerfile, tests/test.sh writing a reward file, "
                    "solution/solve.sh."
                ),
            loader="agentrig.formats.harbor.format:HarborFormat",
        ),
        ProblemFormatSpec(
            name="terminal-bench",
            description="A Terminal-Bench task: task.yaml (with the instruction), Dockerfile, run-tests.sh, tests/, solution.sh.",
            loader="agentrig.formats.harbor.format:TerminalBenchFormat",
        ),
    ]


@hookimpl
def agentrig_agents() -> list[AgentSpec]:
    """The core's own agent: ``oracle``, which needs no model."""
    return [
        AgentSpec(
            name="oracle",
            description="Applies the problem's reference solution for each checkpoint (no model).",
            config="agentrig.agents.oracle:OracleConfig",
            agent="agentrig.agents.oracle:OracleAgent",
            needs_model=False,
        )
    ]


@hookimpl
def agentrig_datasets() -> list[DatasetSpec]:
    """The core's example dataset: three small problems, each checkpoint with a reference solution."""
    return [
        DatasetSpec(
            name="starter",
            version="0.1.0",
            description="Three small Python problems with reference solutions (--agent oracle passes them).",
            path="agentrig.datasets:starter",
        )
    ]



#: Modules of the HTTP stack both SDKs import on their first call.
_TRANSPORT = ("anyio._backends._asyncio", "httpcore2", "httpcore", "h11")


@hookimpl
def agentrig_model_providers() -> list[ModelProviderSpec]:
    """The core's model clients, by import path: ``openai`` also serves every provider no plugin
    declares (vLLM, Ollama, llama.cpp, OpenRouter...) as an OpenAI-compatible server."""
    return [
        ModelProviderSpec(
            name="openai",
            description="OpenAI chat completions; also any OpenAI-compatible server (<PROVIDER>_BASE_URL).",
            client="agentrig.llm.openai_chat:OpenAIChat",
            env_vars=("OPENAI_API_KEY",),
            base_url_env="OPENAI_BASE_URL",
            preload=("openai", "openai.resources.chat.chat", "openai.resources.chat.completions", *_TRANSPORT),
        ),
        ModelProviderSpec(
            name="anthropic",
            description="Anthropic's Messages API (or a server speaking it at ANTHROPIC_BASE_URL).",
            client="agentrig.llm.anthropic_chat:AnthropicChat",
            env_vars=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
            base_url_env="ANTHROPIC_BASE_URL",
            preload=("anthropic", *_TRANSPORT),
        ),
        ModelProviderSpec(
            name="replay",
            description="Replies recorded in a file (--model replay/PATH): no service, no credential.",
            client="agentrig.llm.replay:replay_client",
            needs_credential=False,
        ),
    ]


@hookimpl
def agentrig_metrics() -> list[MetricSpec]:
    """The core's Python code-quality metrics, by import path (their tools, radon, ruff and ast-grep,
    are imported or run only when a metric is computed: ``pip install 'agentrig[metrics]'``)."""
    metrics = "agentrig.metrics"
    return [
        MetricSpec(name="size", description="Lines of code, comments and files (radon's raw metrics).",
                   metric=f"{metrics}.size:SizeMetric"),
        MetricSpec(name="lint", description="ruff's violations by rule and rule family.",
                   metric=f"{metrics}.lint:LintMetric"),
        MetricSpec(name="complexity", description="Cyclomatic complexity per function with its A-F rank, "
                   "maximum nesting depth, maintainability index (radon).", metric=f"{metrics}.complexity:ComplexityMetric"),
        MetricSpec(name="patterns", description="AST pattern violations (ast-grep, rules shipped as data).",
                   metric=f"{metrics}.patterns:PatternsMetric"),
        MetricSpec(name="waste", description="Trivial wrappers, single-use and unused functions.",
                   metric=f"{metrics}.waste:WasteMetric"),
        MetricSpec(name="duplication", description="Duplicated code: functions and blocks equal up to names and constants.",
                   metric=f"{metrics}.duplication:DuplicationMetric"),
        MetricSpec(name="slopcode", description="SlopCodeBench's headline figures by its definitions: erosion, "
                   "verbosity, symbols, complexity extremes, concentration and mass, waste, ast-grep per category.",
                   metric=f"{metrics}.slopcode:SlopCodeMetric"),
    ]
