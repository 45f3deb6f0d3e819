"""Lark grammar text -> terminals (in lark's lexing order) + LALR(1) table, with errors that name a line.

Everything the grammar engine knows about lark lives here: which terminals exist and how lark's
lexer ranks them, which string terminals lark re-types out of a regex terminal (keywords inside a
NAME), which terminals are ignored, and the LALR(1) parse table as plain integers.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from ..errors import GrammarError

# lark's common.ESCAPED_STRING uses a lookbehind; this lookaround-free regex matches the same strings
# with the same (first unescaped quote) end, so the byte DFA can be built from it.
_ESCAPED_STRING_LARK = r'".*?(?<!\\)(\\\\)*?"'
_ESCAPED_STRING_DFA = r'"(?:[^"\\\n]|\\[^\n])*"'
_SUBSTITUTES = {_ESCAPED_STRING_LARK: _ESCAPED_STRING_DFA}

_LAZY = re.compile(r"(?<!\\)(?:\\\\)*[*+?}]\?")
_UNICODE_CLASS = re.compile(r"(?<!\\)(?:\\\\)*\\[wWdDsS]")
_INLINE_I = re.compile(r"\(\?[a-zA-Z]*i[a-zA-Z]*[:)]")

END = "$END"


@dataclass
class Terminal:
    """One lark terminal. ``id`` is its position in lark's lexing order (0 = tried first)."""

    id: int
    name: str
    regexp: str  # the Python regex lark's lexer uses
    dfa_regexp: str  # the regex the byte DFA is built from (lookaround-free substitute where needed)
    priority: int
    is_string: bool
    flags: frozenset
    lazy: bool  # uses lazy quantifiers: lark takes the shortest match
    unicode_sensitive: bool  # \w \d \s or case folding: Python's re matches non-ASCII text here
    line: int | None
    value: str = ""  # lark's pattern value (the literal text of a string terminal)
    ignored: bool = False


@dataclass
class ParseTable:
    """LALR(1) table as ints. ``action[s][t]``: >= 0 shift to that state, < 0 reduce rule ``~a``."""

    action: list[dict[int, int]]
    goto: list[dict[int, int]]
    rule_len: list[int]
    rule_lhs: list[int]
    rule_text: list[str]
    start_state: int
    end_state: int
    end_term: int  # id of $END (== number of terminals)
    nonterminals: list[str]


@dataclass
class LarkGrammar:
    """A lark grammar taken apart for the engine."""

    text: str
    start: str
    terminals: list[Terminal]
    table: ParseTable
    ignore: frozenset[int]
    follow: dict[int, frozenset[int]]  # terminal -> terminals that may come right after it (END included)
    first: frozenset[int]  # terminals that may start a sentence (END when empty is allowed)
    lark: object = field(repr=False, default=None)

    @property
    def n_terms(self) -> int:
        return len(self.terminals)

    def term_id(self, name: str) -> int:
        return next(t.id for t in self.terminals if t.name == name)


_TABLE_ONLY_LEXER = None
_LOAD_LOCK = threading.Lock()


def _load_quietly(lark, text: str, start: str):
    """``lark.Lark`` without its interegular collision diagnostics (0.7 s on first use in a process,
    for lark's own meta-grammar): the engine resolves terminal collisions itself."""
    import lark.lexer as lark_lexer

    with _LOAD_LOCK:
        saved = getattr(lark_lexer, "has_interegular", False)
        lark_lexer.has_interegular = False
        try:
            return lark.Lark(text, parser="lalr", lexer=_table_only_lexer(), start=start)
        finally:
            lark_lexer.has_interegular = saved


def _table_only_lexer():
    """A lark Lexer class that does nothing: lark then skips building (and collision-checking) its own
    lexers, which the engine replaces; only the grammar and the LALR table are needed."""
    global _TABLE_ONLY_LEXER
    if _TABLE_ONLY_LEXER is None:
        from lark.lexer import Lexer

        class TableOnlyLexer(Lexer):
            __future_interface__ = 1

            def __init__(self, lexer_conf):
                self.lexer_conf = lexer_conf

            def lex(self, *args):  # pragma: no cover - never called
                raise NotImplementedError("fsm grammars are lexed by fsm.grammar_lexer")

        _TABLE_ONLY_LEXER = TableOnlyLexer
    return _TABLE_ONLY_LEXER


def _line_of_definition(text: str, name: str) -> int | None:
    m = re.search(rf"^[ \t]*[?!]?{re.escape(name)}(\.-?\d+)?[ \t]*:", text, re.MULTILINE)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _line_of_pattern(text: str, value: str) -> int | None:
    for probe in (f"/{value}/", f'"{value}"', value):
        i = text.find(probe)
        if i >= 0:
            return text.count("\n", 0, i) + 1
    return None


def _where(line: int | None) -> str:
    return f" (line {line})" if line else ""


def load_lark(text: str, start: str = "start") -> LarkGrammar:
    """Parse ``text`` with lark (LALR) and extract terminals, ignore set and integer parse table.

    >>> g = load_lark('start: "a" B\\nB: /b+/')
    >>> [t.name for t in g.terminals], g.table.start_state >= 0
    (['B', 'A'], True)
    """
    import lark
    from lark.exceptions import GrammarError as LarkGrammarError
    from lark.exceptions import LarkError, UnexpectedInput

    if not isinstance(text, str):
        raise GrammarError(f"a grammar must be lark text (str), got {type(text).__name__}")
    try:
        parser = _load_quietly(lark, text, start)
    except UnexpectedInput as exc:
        line = getattr(exc, "line", None)
        col = getattr(exc, "column", None)
        raise GrammarError(
            f"lark grammar syntax error at line {line}, column {col}: {str(exc).strip()}"
        ) from None
    except LarkGrammarError as exc:
        raise GrammarError(_explain_lark_error(text, str(exc))) from None
    except LarkError as exc:
        raise GrammarError(_explain_lark_error(text, str(exc))) from None
    except (KeyError, AssertionError, ValueError) as exc:
        raise GrammarError(f"lark could not build the grammar: {exc!r}") from None

    terminals = _terminals(parser, text)
    by_name = {t.name: t.id for t in terminals}
    table = _extract_table(parser, by_name, text, start)
    ignore = frozenset(by_name[n] for n in parser.ignore_tokens if n in by_name)
    first, follow = _first_follow(parser, by_name, start)
    _check_productive(parser, text, start)
    return LarkGrammar(text, start, terminals, table, ignore, follow, first, parser)


def _terminals(parser, text: str) -> list[Terminal]:
    """The grammar's terminals in lark's BasicLexer order (first match wins, in this order)."""
    raw_terms = list(parser.terminals)
    ignore_names = set(parser.ignore_tokens)
    raw_terms.sort(key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
    terminals: list[Terminal] = []
    for i, t in enumerate(raw_terms):
        regexp = t.pattern.to_regexp()
        is_string = type(t.pattern).__name__ == "PatternStr"
        line = _line_of_definition(text, t.name)
        if line is None and t.name.startswith("__"):
            line = _line_of_pattern(text, t.pattern.value)
        flags = frozenset(t.pattern.flags)
        terminals.append(
            Terminal(
                id=i,
                name=t.name,
                regexp=regexp,
                dfa_regexp=_SUBSTITUTES.get(regexp, regexp),
                priority=t.priority,
                is_string=is_string,
                flags=flags,
                lazy=not is_string and regexp not in _SUBSTITUTES and bool(_LAZY.search(regexp)),
                unicode_sensitive=("i" in flags)
                or bool(_INLINE_I.search(regexp))
                or (not is_string and bool(_UNICODE_CLASS.search(_SUBSTITUTES.get(regexp, regexp)))),
                line=line,
                value=t.pattern.value,
                ignored=t.name in ignore_names,
            )
        )
    return terminals


def _explain_lark_error(text: str, msg: str) -> str:
    msg = msg.strip()
    m = re.search(r"Reduce/Reduce collision in (\S+) between the following rules:", msg)
    if m:
        names = sorted(set(re.findall(r"-\s*<\s*([\w$]+)\s*:", msg)))
        where = [
            f"'{n}'{_where(_line_of_definition(text, n) or _line_of_definition(text, n.lstrip('?!_')))}"
            for n in names
        ]
        return (
            f"grammar is ambiguous for an LALR(1) parser: rules {' and '.join(where)} can both end on "
            f"{m.group(1)} (reduce/reduce collision); rewrite them so one lookahead decides. lark says: {msg}"
        )
    m = re.search(r"in rule '?([A-Za-z_]\w*)", msg) or re.search(
        r"(?:Rule|Terminal|Using an undefined rule|Using an undefined terminal)\D*?'?([A-Za-z_]\w*)'?", msg
    )
    line = _line_of_definition(text, m.group(1)) if m else None
    if line is None:
        lm = re.search(r"line (\d+)", msg)
        line = int(lm.group(1)) if lm else None
    return f"lark rejected the grammar{_where(line)}: {msg}"


def _extract_table(parser, by_name: dict[str, int], text: str, start: str) -> ParseTable:
    """lark's LALR table as integer actions (shift: state, reduce: ~rule) and gotos."""
    from lark.parsers.lalr_analysis import Shift

    pt = parser.parser.parser.parser.parse_table
    states = pt.states
    n_terms = len(by_name)
    end_term = n_terms
    nt_names: list[str] = []
    nt_id: dict[str, int] = {}
    rules: list = []
    rule_id: dict[int, int] = {}
    action: list[dict[int, int]] = [{} for _ in range(len(states))]
    goto: list[dict[int, int]] = [{} for _ in range(len(states))]
    if sorted(states) != list(range(len(states))):
        raise GrammarError("unexpected lark parse table layout (non-contiguous states)")
    for s, row in states.items():
        for sym, (act, arg) in row.items():
            if sym == END:
                t = end_term
            elif sym in by_name:
                t = by_name[sym]
            elif sym.isupper() or (sym.startswith("__") and sym.upper() == sym):
                line = _line_of_definition(text, sym)
                raise GrammarError(
                    f"terminal {sym}{_where(line)} has no pattern (%declare'd terminals need a postlexer, "
                    "which constraints cannot follow); give it a pattern"
                )
            else:
                t = None
            if t is None:  # nonterminal: a goto
                if act is not Shift:
                    raise GrammarError(f"unexpected reduce on nonterminal {sym} in lark's table")
                if sym not in nt_id:
                    nt_id[sym] = len(nt_names)
                    nt_names.append(sym)
                goto[s][nt_id[sym]] = arg
                continue
            if act is Shift:
                action[s][t] = arg
            else:
                key = id(arg)
                if key not in rule_id:
                    rule_id[key] = len(rules)
                    rules.append(arg)
                action[s][t] = ~rule_id[key]
    rule_len, rule_lhs, rule_text = _rule_arrays(rules, nt_id, nt_names)
    return ParseTable(
        action=action,
        goto=goto,
        rule_len=rule_len,
        rule_lhs=rule_lhs,
        rule_text=rule_text,
        start_state=pt.start_states[start],
        end_state=pt.end_states[start],
        end_term=end_term,
        nonterminals=nt_names,
    )


def _rule_arrays(
    rules: list, nt_id: dict[str, int], nt_names: list[str]
) -> tuple[list[int], list[int], list[str]]:
    """Length, left-hand nonterminal id and text of each rule (new nonterminals are numbered)."""
    rule_len, rule_lhs, rule_text = [], [], []
    for r in rules:
        name = r.origin.name
        name = name if isinstance(name, str) else str(name)
        if name not in nt_id:
            nt_id[name] = len(nt_names)
            nt_names.append(name)
        rule_len.append(len(r.expansion))
        rule_lhs.append(nt_id[name])
        rule_text.append(str(r))
    return rule_len, rule_lhs, rule_text


def _symbols(parser):
    rules = [(r.origin.name, [(s.name, s.is_term) for s in r.expansion]) for r in parser.rules]
    return rules


def _first_follow(parser, by_name: dict[str, int], start: str):
    """FIRST of the start symbol and FOLLOW of every terminal (END = len(terminals))."""
    end = len(by_name)
    rules = _symbols(parser)
    nts = {lhs for lhs, _ in rules}
    nullable: set[str] = set()
    first: dict[str, set[int]] = {n: set() for n in nts}
    changed = True
    while changed:
        changed = False
        for lhs, rhs in rules:
            if all((not term) and name in nullable for name, term in rhs) and lhs not in nullable:
                nullable.add(lhs)
                changed = True
            acc: set[int] = set()
            for name, term in rhs:
                if term:
                    acc.add(by_name[name])
                    break
                acc |= first.get(name, set())
                if name not in nullable:
                    break
            if not acc <= first[lhs]:
                first[lhs] |= acc
                changed = True
    # follow over all symbols, terminals included
    follow: dict[tuple[str, bool], set[int]] = {}
    follow[(start, False)] = {end}
    changed = True
    while changed:
        changed = False
        for lhs, rhs in rules:
            trailer = set(follow.get((lhs, False), set()))
            for name, term in reversed(rhs):
                key = (name, term)
                cur = follow.setdefault(key, set())
                if not trailer <= cur:
                    cur |= trailer
                    changed = True
                if term:
                    trailer = {by_name[name]}
                else:
                    if name in nullable:
                        trailer = trailer | first.get(name, set())
                    else:
                        trailer = set(first.get(name, set()))
    out = {by_name[name]: frozenset(v) for (name, term), v in follow.items() if term}
    start_first = set(first.get(start, set()))
    if start in nullable:
        start_first.add(end)
    return frozenset(start_first), out


def _check_productive(parser, text: str, start: str) -> None:
    rules = _symbols(parser)
    productive: set[str] = set()
    changed = True
    while changed:
        changed = False
        for lhs, rhs in rules:
            if lhs not in productive and all(term or name in productive for name, term in rhs):
                productive.add(lhs)
                changed = True
    bad = sorted(str(n) for n in {lhs for lhs, _ in rules} - productive)
    if bad:
        name = bad[0]
        line = _line_of_definition(text, name)
        raise GrammarError(
            f"rule {name!r}{_where(line)} can never derive a finite string (every alternative recurses "
            f"forever){'' if len(bad) == 1 else f'; also: {bad[1:]}'}"
        )
