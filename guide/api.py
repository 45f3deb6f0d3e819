"""The user-facing API in one place: what ``guide/__init__.py`` re-exports for users.

>>> from guide.api import Generator, structured, function, Regex, Grammar, Truncated   # doctest: +SKIP
"""

from .decorators import function, structured
from .generator import Generator, default_model, format_prompt
from .output_types import Choice, Grammar, OutputType, OutputTypeError, Regex, builtin_grammars, output_type
from .reasoning import Reasoned, Reasoning
from .results import GenerationError, InvalidOutput, Result, Truncated
from .tool_formats import ToolFormat
from .tools import Tool, ToolCall, ToolError, ToolReply, Tools

__all__ = [
    "Choice",
    "GenerationError",
    "Generator",
    "Grammar",
    "InvalidOutput",
    "OutputType",
    "OutputTypeError",
    "Reasoned",
    "Reasoning",
    "Regex",
    "Result",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolFormat",
    "ToolReply",
    "Tools",
    "Truncated",
    "builtin_grammars",
    "default_model",
    "format_prompt",
    "function",
    "output_type",
    "structured",
]
