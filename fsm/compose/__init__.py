"""fsm.compose: the spec algebra — free text, literals, special tokens, sequences, alternatives,
repeats, tags and triggered tags, composed from any spec.

Composition happens on the automaton level: a part tree becomes a `program.Program` (slots whose
leaves are byte automata: literals, free text, each spec's own DFA, a grammar's configurations), whose byte DFA
(`dfa.ComposedDFA`) is determinized lazily, so where one part may end the next runs beside it and
a token straddling two parts is walked through both. Specs inside are compiled through
`fsm.compile` the first time a generation enters them (a 500-tool `Triggered` compiles only the
bodies it uses, sharing the `fsm.JsonSchema` cache). Modules: `errors`, `parts` (the specs),
`leaves` (leaf automata), `program` (slot graph), `dfa` (the composed DFA), `index` (its token index).

Sits beside `fsm.compiler` (it compiles its parts through it): may import the compiler, `fsm.index`,
`fsm.automata`, `fsm.spec` and the foundation; nothing below imports it.

>>> import fsm
>>> v = fsm.Vocabulary([bytes([b]) for b in range(256)] + [None], eos_token_ids=[256])
>>> spec = fsm.Triggered([fsm.Tag("<n>", fsm.Regex(r"\\d"), "</n>")])
>>> m = fsm.compile(spec, v).matcher()
>>> for b in b"hi <n>7</n>": m.advance(b)
>>> m.is_accepting()
True
"""

from .errors import CompositionError
from .index import ComposedIndex
from .parts import Alternatives, Literal, Part, Repeat, Sequence, Tag, Text, Token, Triggered

__all__ = [
    "Alternatives",
    "ComposedIndex",
    "CompositionError",
    "Literal",
    "Part",
    "Repeat",
    "Sequence",
    "Tag",
    "Text",
    "Token",
    "Triggered",
]
