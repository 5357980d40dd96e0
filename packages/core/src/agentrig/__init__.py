"""agentrig: run coding agents on multi-checkpoint tasks; agents are plugins.

Everything a plugin author needs is importable from here. Names are loaded on
first access so that ``import agentrig`` in a plugin module stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrig.lazy import lazy_exports
from agentrig.markers import hookimpl, hookspec

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "AgentSpec": "agentrig.specs",
    "RuntimeSpec": "agentrig.specs",
    "StreamParserSpec": "agentrig.specs",
    "ExecutorSpec": "agentrig.specs",
    "Executor": "agentrig.executors.interface",
    "ExecutorError": "agentrig.executors.interface",
    "ExecutorUnavailableError": "agentrig.executors.interface",
    "ProblemFormatSpec": "agentrig.specs",
    "DatasetSpec": "agentrig.specs",
    "ModelProviderSpec": "agentrig.specs",
    "MetricSpec": "agentrig.specs",
    "Metric": "agentrig.metrics.interface",
    "ProblemFormat": "agentrig.formats.interface",
    "ProblemError": "agentrig.problem",
    "Agent": "agentrig.agents.interface",
    "AgentConfigBase": "agentrig.agents.interface",
    "AgentContext": "agentrig.agents.interface",
    "McpStdioServer": "agentrig.agents.mcp",
    "McpHttpServer": "agentrig.agents.mcp",
    "CheckpointInferenceResult": "agentrig.agents.result",
    "AgentCostLimits": "agentrig.usage",
    "UsageTracker": "agentrig.usage",
    "TokenUsage": "agentrig.usage",
    "APIPricing": "agentrig.pricing",
    "ModelDefinition": "agentrig.model_definition",
    "ThinkingPreset": "agentrig.model_definition",
    "ProviderCredential": "agentrig.credentials",
    "TrajectoryStep": "agentrig.trajectory",
    "UserStep": "agentrig.trajectory",
    "AgentTextStep": "agentrig.trajectory",
    "ThinkingStep": "agentrig.trajectory",
    "ToolUseStep": "agentrig.trajectory",
    "ErrorStep": "agentrig.trajectory",
    "LLMCall": "agentrig.trajectory",
    "PlanStep": "agentrig.trajectory",
    "RecordedMessage": "agentrig.trajectory",
    "RecordedToolCall": "agentrig.trajectory",
    "parse_step": "agentrig.trajectory",
    "AgentError": "agentrig.errors",
    "AgentSetupError": "agentrig.errors",
    "AgentStepError": "agentrig.errors",
    "AgentLimitError": "agentrig.errors",
    "UnsupportedEnvironmentError": "agentrig.errors",
    "PluginError": "agentrig.errors",
    "UnknownAgentError": "agentrig.errors",
    "UnknownPluginError": "agentrig.errors",
    "StreamParser": "agentrig.agents.stream",
    "Checkpoint": "agentrig.problem",
    "Problem": "agentrig.problem",
    "StepAgent": "agentrig.agents.step",
    "StepAgentConfig": "agentrig.agents.step",
    "StepAgentAdapter": "agentrig.agents.step",
    "AgentOutput": "agentrig.agents.step",
    "Action": "agentrig.agents.step",
    "ActionSchema": "agentrig.agents.step",
    "ActionResult": "agentrig.agents.step",
    "Observation": "agentrig.agents.step",
    "WorkspaceFacts": "agentrig.agents.step",
    "run_task": "agentrig.api",
    "list_tools": "agentrig.api",
    "TaskResult": "agentrig.api",
    "get_agent_cls": "agentrig.agents.interface",
    "get_agent_config_cls": "agentrig.agents.interface",
    "available_agent_types": "agentrig.registry",
}

__all__ = ["__version__", "hookimpl", "hookspec", *_EXPORTS]  # noqa: PLE0604  # the names of _EXPORTS (strings)


# `agentrig.plugins` (register, the registry's lookups) after a plain `import agentrig`, as before the registry moved
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS, ("__version__", "hookimpl", "hookspec"), ("plugins",))


if TYPE_CHECKING:  # `X as X`: the lazy names, re-exported for type checkers and for ruff
    from agentrig.agents.interface import (
        Agent as Agent,
        AgentConfigBase as AgentConfigBase,
        AgentContext as AgentContext,
        get_agent_cls as get_agent_cls,
        get_agent_config_cls as get_agent_config_cls,
    )
    from agentrig.agents.mcp import (
        McpHttpServer as McpHttpServer,
        McpStdioServer as McpStdioServer,
    )
    from agentrig.agents.result import (
        CheckpointInferenceResult as CheckpointInferenceResult,
    )
    from agentrig.agents.step import (
        Action as Action,
        ActionResult as ActionResult,
        ActionSchema as ActionSchema,
        AgentOutput as AgentOutput,
        Observation as Observation,
        StepAgent as StepAgent,
        StepAgentAdapter as StepAgentAdapter,
        StepAgentConfig as StepAgentConfig,
        WorkspaceFacts as WorkspaceFacts,
    )
    from agentrig.agents.stream import (
        StreamParser as StreamParser,
    )
    from agentrig.api import (
        TaskResult as TaskResult,
        list_tools as list_tools,
        run_task as run_task,
    )
    from agentrig.credentials import (
        ProviderCredential as ProviderCredential,
    )
    from agentrig.errors import (
        AgentError as AgentError,
        AgentLimitError as AgentLimitError,
        AgentSetupError as AgentSetupError,
        AgentStepError as AgentStepError,
        PluginError as PluginError,
        UnknownAgentError as UnknownAgentError,
        UnknownPluginError as UnknownPluginError,
        UnsupportedEnvironmentError as UnsupportedEnvironmentError,
    )
    from agentrig.executors.interface import (
        Executor as Executor,
        ExecutorError as ExecutorError,
        ExecutorUnavailableError as ExecutorUnavailableError,
    )
    from agentrig.formats.interface import (
        ProblemFormat as ProblemFormat,
    )
    from agentrig.metrics.interface import Metric as Metric
    from agentrig.model_definition import (
        ModelDefinition as ModelDefinition,
        ThinkingPreset as ThinkingPreset,
    )
    from agentrig.pricing import (
        APIPricing as APIPricing,
    )
    from agentrig.problem import (
        Checkpoint as Checkpoint,
        Problem as Problem,
        ProblemError as ProblemError,
    )
    from agentrig.registry import (
        available_agent_types as available_agent_types,
    )
    from agentrig.specs import (
        AgentSpec as AgentSpec,
        DatasetSpec as DatasetSpec,
        ExecutorSpec as ExecutorSpec,
        MetricSpec as MetricSpec,
        ModelProviderSpec as ModelProviderSpec,
        ProblemFormatSpec as ProblemFormatSpec,
        RuntimeSpec as RuntimeSpec,
        StreamParserSpec as StreamParserSpec,
    )
    from agentrig.trajectory import (
        AgentTextStep as AgentTextStep,
        ErrorStep as ErrorStep,
        LLMCall as LLMCall,
        PlanStep as PlanStep,
        RecordedMessage as RecordedMessage,
        RecordedToolCall as RecordedToolCall,
        ThinkingStep as ThinkingStep,
        ToolUseStep as ToolUseStep,
        TrajectoryStep as TrajectoryStep,
        UserStep as UserStep,
        parse_step as parse_step,
    )
    from agentrig.usage import (
        AgentCostLimits as AgentCostLimits,
        TokenUsage as TokenUsage,
        UsageTracker as UsageTracker,
    )
