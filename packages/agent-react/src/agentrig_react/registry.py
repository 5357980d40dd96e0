"""The tool registry: typed, docstring'd Python functions become tools with JSON schemas.

A function decorated with :func:`tool` takes an optional first parameter
annotated :class:`~agentrig_react.context.ToolContext` and keyword arguments
with type hints; its docstring's first paragraph is the tool's description
and its ``Args:`` section describes each argument. The arguments become a
pydantic model, whose JSON schema is what the model is sent and which
validates the model's arguments before the function runs.
"""

from __future__ import annotations

import inspect
import re
import time
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from agentrig.llm.interface import ToolSpec
from agentrig_react.context import ToolContext, ToolError
from agentrig_react.truncation import truncate_middle

_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class ToolDefinitionError(TypeError):
    """A function cannot become a tool (no docstring, an untyped parameter, a bad name)."""


class ToolOutput(BaseModel):
    """What one tool call produced, as the model will see it.

    ``submitted`` marks the call that ends the run (the ``submit`` tool);
    ``exit_code`` is set by tools that run commands; ``metadata`` carries
    structured facts beyond the text (recorded in the ``ToolUseStep``, never
    shown to the model), e.g. ``{"status": "unavailable"}`` from a failed subagent.
    """

    model_config = ConfigDict(extra="forbid")

    content: str
    is_error: bool = False
    exit_code: int | None = None
    submitted: bool = False
    elapsed: float = 0.0
    metadata: dict[str, Any] | None = None


ToolHandler = Callable[[ToolContext, BaseModel], "ToolOutput | str"]


class Tool:
    """One tool: a name, a description, an argument model and the code that runs it."""

    def __init__(self, name: str, description: str, input_model: type[BaseModel], handler: ToolHandler) -> None:
        """Make a tool from an argument model and ``handler(context, arguments)``."""
        if not _NAME_RE.match(name):
            raise ToolDefinitionError(f"tool name '{name}' must be 1-64 letters, digits, '_' or '-'")
        if not description.strip():
            raise ToolDefinitionError(f"tool '{name}' has no description")
        self.name = name
        self.description = description.strip()
        self.input_model = input_model
        self.handler = handler

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments, cleaned of pydantic's titles and nullable noise."""
        return clean_schema(self.input_model.model_json_schema())

    def spec(self, description: str | None = None) -> ToolSpec:
        """The :class:`ToolSpec` sent to the model (``description`` overrides the docstring's)."""
        return ToolSpec(name=self.name, description=description or self.description, parameters=self.parameters)

    def validate(self, arguments: Mapping[str, Any]) -> BaseModel:
        """The arguments as the tool's model; raises :class:`ToolError` naming what is wrong."""
        try:
            return self.input_model.model_validate(dict(arguments))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}" for err in exc.errors()
            )
            raise ToolError(f"invalid arguments for {self.name}: {problems}") from None

    def invoke(self, context: ToolContext, arguments: Mapping[str, Any]) -> ToolOutput:
        """Run the tool. Never raises: errors come back as an error :class:`ToolOutput`."""
        started = time.monotonic()
        try:
            result = self.handler(context, self.validate(arguments))
            output = result if isinstance(result, ToolOutput) else ToolOutput(content=str(result))
        except ToolError as exc:
            output = ToolOutput(content=str(exc), is_error=True)
        except Exception as exc:  # a tool's bug must not end the agent: the model sees it and moves on
            output = ToolOutput(content=f"tool {self.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        output.content = truncate_middle(output.content, context.max_output_chars)
        output.elapsed = time.monotonic() - started
        return output


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema fit for a model: no ``title`` keys, ``X | None = None`` shown as optional ``X``."""

    def walk(node: Any, *, in_properties: bool = False) -> Any:
        if isinstance(node, dict):
            out: dict[str, Any] = {}
            for key, value in node.items():
                if key == "title" and not in_properties and isinstance(value, str):
                    continue
                out[key] = walk(value, in_properties=key in ("properties", "$defs"))
            any_of = out.get("anyOf")
            if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of and "default" in out:
                # Optional with a default: not required anyway, so the null branch only confuses models.
                (other,) = [branch for branch in any_of if branch != {"type": "null"}]
                merged = {k: v for k, v in out.items() if k != "anyOf"}
                if merged.get("default") is None:
                    merged.pop("default")
                merged.update(other)
                return merged
            return out
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    cleaned = walk(schema)
    cleaned.setdefault("properties", {})
    return cleaned


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and ``Args:`` descriptions."""
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        header = re.match(r"^(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?|Notes?):\s*$", stripped)
        if header and not line.startswith((" ", "\t")):
            section = header.group(1)
            current = None
            continue
        if section is None:
            description.append(line)
        elif section in ("Args", "Arguments", "Parameters") and stripped:
            match = re.match(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", stripped)
            indent = len(line) - len(line.lstrip())
            if match and (current is None or indent <= _arg_indent(lines, current)):
                current = match.group(1).lstrip("*")
                args[current] = match.group(2).strip()
            elif current is not None:
                args[current] = f"{args[current]} {stripped}".strip()
    return "\n".join(description).strip(), args


def _arg_indent(lines: list[str], name: str) -> int:
    for line in lines:
        if re.match(rf"^\s*\*{{0,2}}{re.escape(name)}\s*(?:\([^)]*\))?\s*:", line):
            return len(line) - len(line.lstrip())
    return 0


def tool(func: Callable[..., Any] | None = None, *, name: str | None = None) -> Any:
    """Make a tool of a typed, docstring'd function: ``@tool`` or ``@tool(name="...")``.

    Raises :class:`ToolDefinitionError` when the function has no docstring,
    an argument without a type hint, or ``*args``/``**kwargs``.
    """

    def decorate(fn: Callable[..., Any]) -> Tool:
        return function_tool(fn, name=name)

    return decorate(func) if func is not None else decorate


def function_tool(fn: Callable[..., Any], *, name: str | None = None) -> Tool:
    """The :class:`Tool` of ``fn`` (what :func:`tool` returns)."""
    tool_name = name or fn.__name__
    if not fn.__doc__ or not fn.__doc__.strip():
        raise ToolDefinitionError(f"tool function '{tool_name}' needs a docstring: it is the tool's description")
    description, arg_docs = parse_docstring(fn.__doc__)
    try:
        hints = typing.get_type_hints(fn)
    except Exception as exc:
        raise ToolDefinitionError(f"tool function '{tool_name}': cannot resolve type hints ({exc})") from None
    params = list(inspect.signature(fn).parameters.values())
    wants_context = bool(params) and hints.get(params[0].name) is ToolContext
    if wants_context:
        params = params[1:]
    fields: dict[str, Any] = {}
    for param in params:
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise ToolDefinitionError(f"tool function '{tool_name}': *args and **kwargs cannot be described to a model")
        if param.name not in hints:
            raise ToolDefinitionError(f"tool function '{tool_name}': argument '{param.name}' needs a type hint")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (hints[param.name], Field(default, description=arg_docs.get(param.name)))
    model_name = "".join(part.capitalize() for part in re.split(r"[_-]", tool_name)) + "Arguments"
    input_model = create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)
    names = [param.name for param in params]

    def handler(context: ToolContext, arguments: BaseModel) -> ToolOutput | str:
        values = {key: getattr(arguments, key) for key in names}
        return fn(context, **values) if wants_context else fn(**values)

    made = Tool(tool_name, description, input_model, handler)
    made.__doc__ = fn.__doc__
    return made


class ToolRegistry:
    """The tools an agent offers, by name, in the order they were added."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        """Start with ``tools``."""
        self._tools: dict[str, Tool] = {}
        self._descriptions: dict[str, str] = {}
        for item in tools:
            self.add(item)

    def add(self, item: Tool) -> None:
        """Add a tool; a second tool with the same name is an error."""
        if item.name in self._tools:
            raise ToolDefinitionError(f"a tool named '{item.name}' is already registered")
        self._tools[item.name] = item

    def override_descriptions(self, overrides: Mapping[str, str]) -> None:
        """Replace tools' descriptions; naming a tool that does not exist is an error."""
        unknown = sorted(set(overrides) - set(self._tools))
        if unknown:
            raise ToolDefinitionError(
                f"description_overrides names unknown tool(s) {', '.join(unknown)}"
                f" (tools: {', '.join(self._tools)})"
            )
        self._descriptions.update(overrides)

    def keep(self, names: Iterable[str], *, also: Iterable[str] = ()) -> None:
        """Offer only the tools ``names`` (and ``also``), in registration order; an unknown name is an error."""
        wanted = set(names)
        unknown = sorted(wanted - set(self._tools))
        if unknown:
            raise ToolDefinitionError(f"tools: unknown tool(s) {', '.join(unknown)} (tools: {', '.join(self._tools)})")
        wanted |= set(also)
        self._tools = {name: item for name, item in self._tools.items() if name in wanted}
        self._descriptions = {name: text for name, text in self._descriptions.items() if name in wanted}

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> typing.Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        """Tool names in registration order."""
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def description(self, name: str) -> str:
        """The description the model sees for ``name`` (an override if one is set)."""
        return self._descriptions.get(name) or self._tools[name].description

    def specs(self) -> list[ToolSpec]:
        """Every tool's :class:`ToolSpec`, descriptions overridden where configured."""
        return [item.spec(self._descriptions.get(item.name)) for item in self._tools.values()]

    def invoke(self, context: ToolContext, name: str, arguments: Mapping[str, Any]) -> ToolOutput:
        """Run tool ``name``; an unknown name comes back as an error output listing the tools."""
        item = self._tools.get(name)
        if item is None:
            return ToolOutput(content=f"unknown tool '{name}'; available tools: {', '.join(self._tools)}", is_error=True)
        return item.invoke(context, arguments)
