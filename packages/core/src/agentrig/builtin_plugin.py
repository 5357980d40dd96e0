"""The core's own plugin: the ``local`` and ``docker`` runtimes, the ``local`` executor, the core's
problem formats, the ``oracle`` agent and the ``starter`` dataset.

Registered through the ``agentrig`` entry-point group exactly as a third
party registers ``podman`` or ``k8s``; nothing here imports a runtime or a format.
"""

from __future__ import annotations

from agentrig.markers import hookimpl
from agentrig.specs import AgentSpec, DatasetSpec, ExecutorSpec, ProblemFormatSpec, RuntimeSpec


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
            description="A Harbor task: task.toml, instruction.md, environment/Dockerfile, tests/test.sh writing a reward file, solution/solve.sh.",
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
            config="agentrig.oracle:OracleConfig",
            agent="agentrig.oracle:OracleAgent",
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

