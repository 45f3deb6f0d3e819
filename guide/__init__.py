"""guide: constrained and guided generation with language models (models, sampling, the generate loop).

Owns everything that needs torch: models and their KV caches (`models`, `sources`), guidance
combinations (`guidance`), masks on the logits' device (`masks`), sampling (`sampling`), the batched
loop (`generate`), the user API (`api`: `Generator`, output types, decorators) and the CLI. May import
`fsm` (its public names only), torch and transformers; `fsm` never imports `guide`.

>>> import guide, fsm                                                      # doctest: +SKIP
>>> model = guide.load()                                                   # doctest: +SKIP
>>> guide.generate(model, "Pick: ", fsm.Choice(["red", "blue"]))[0].text    # doctest: +SKIP
'red'
"""

# The user API (Generator, output types, decorators): see guide/api.py.
from .api import (
    Choice,
    GenerationError,
    Generator,
    Grammar,
    InvalidOutput,
    OutputTypeError,
    Reasoned,
    Reasoning,
    Regex,
    Result,
    Tool,
    ToolCall,
    ToolError,
    ToolFormat,
    ToolReply,
    Tools,
    Truncated,
    function,
    structured,
)
from .generate import Completion, generate, stream

# Guidance sources (DExperts, proxy-tuning, CFG, FUDGE, contrastive): see guide/guidance.py.
from .guidance import (
    ClassifierFreeGuidance,
    ClassifierGuidance,
    Contrastive,
    DExperts,
    GuidanceError,
    Prompted,
    ProxyTuning,
    VocabularyMismatch,
)
from .logits_processor import LogitsProcessor
from .models import Model, load
from .sampling import InvalidLogitsError, SamplingError
from .sources import LogitsSource, Session
from .watermark import Watermark, WatermarkScore, detect_watermark

__all__ = [
    "Choice",
    "ClassifierFreeGuidance",
    "ClassifierGuidance",
    "Completion",
    "Contrastive",
    "DExperts",
    "GenerationError",
    "Generator",
    "Grammar",
    "GuidanceError",
    "InvalidLogitsError",
    "InvalidOutput",
    "LogitsProcessor",
    "LogitsSource",
    "Model",
    "OutputTypeError",
    "Prompted",
    "ProxyTuning",
    "Reasoned",
    "Reasoning",
    "Regex",
    "Result",
    "SamplingError",
    "Session",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolFormat",
    "ToolReply",
    "Tools",
    "Truncated",
    "VocabularyMismatch",
    "Watermark",
    "WatermarkScore",
    "detect_watermark",
    "function",
    "generate",
    "load",
    "stream",
    "structured",
]
