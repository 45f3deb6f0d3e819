"""Write a translated JSON schema (`json_ast` tree with ``Ref`` nodes) as a Lark grammar.

Terminals are JSON lexemes: the punctuation ``{ } [ ] ,``, a key with its colon (``"name":``), one
scalar value (a string with its constraints, a number range, ``true``...; the alternatives of a value
that start alike merged into one terminal, so ambiguity inside it is the DFA's business, not LALR's).
Objects and arrays are rules, ``Members`` one rule per position. Small terminals keep the terminal
DFAs and the product lexer cheap, and a key never shares a terminal with the value after it, so the
keys of sibling alternatives never fight over the same text. ``json_value`` is compact JSON. No
``%ignore``: the layout is exactly the compact one the regular path generates.

The analyses of the tree it relies on (nullability, lexemes, first sets, productive rules) are in
`lark_nodes`.

>>> from fsm.automata import lit, seq, Ref
>>> print(to_lark(seq(lit("["), Ref("d0"), lit("]")), {"d0": lit("1")}), end="")
start: "[" d0 "]"
d0: "1"
"""

from __future__ import annotations

import json
import re

from ..automata import (
    ANY_CHAR,
    EMPTY,
    NEVER,
    Alt,
    Bounds,
    Cls,
    Enc,
    Lit,
    Members,
    Node,
    Ref,
    Rep,
    Seq,
    Val,
    alt,
    lit,
    number_node,
    rep,
    seq,
    to_regex,
)
from ..errors import SchemaError, SchemaTooComplex, SpecTooComplex, UnsupportedSchema
from .lark_nodes import (
    drop_unproductive,
    firsts,
    has_ref,
    is_lexeme,
    longest_first,
    nonempty,
    nullable,
    productive,
    unval,
)


def _wrap(text: str) -> str:
    """``text`` as one grammar atom (parenthesized unless it already is one)."""
    if not text:
        return '""'
    if " " not in text:
        return text
    if text[0] in "([" and text[-1] == {"(": ")", "[": "]"}[text[0]]:
        depth = 0
        for i, ch in enumerate(text):  # the opening bracket must close only at the end
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
                if depth == 0 and i < len(text) - 1:
                    break
            elif ch in '"/':  # literals and regexes may hold brackets: give up, parenthesize
                break
        else:
            return text
    return f"({text})"


def _rep_text(inner: str, lo: int, hi: int | None) -> str:
    """Lark repetition of an atom."""
    if hi is None:
        if lo == 0:
            return f"{inner}*"
        if lo == 1:
            return f"{inner}+"
        return f"{inner}~{lo} {inner}*"
    if (lo, hi) == (0, 1):
        return f"[{inner}]"
    if lo == hi:
        return f"{inner}~{lo}"
    if lo == 0:
        return f"[{inner}~1..{hi}]"
    return f"{inner}~{lo}..{hi}"


_PLAIN = re.compile(r"[ !#-\[\]-~]+")  # printable ASCII without quote and backslash


_ANY = Ref("json_value")


_MAX_TERMINAL_CHARS = 200_000  # regex text of one terminal; beyond it lark and the lexer take minutes


class _Writer:
    def __init__(self, deadline=None):
        self.deadline = deadline
        self.memo: dict = {}
        self.lex_memo: dict = {}
        self.values: dict[Node, str] = {}
        self.extra: list[str] = []
        self.n_members = 0
        self.need_json = False

    def term(self, node: Node) -> str:
        """A terminal for a non-empty, reference-free language."""
        if isinstance(node, Lit) and _PLAIN.fullmatch(node.text):
            return json.dumps(node.text)
        if self.deadline is not None:
            self.deadline.check("JSON schema grammar")
        rx = to_regex(node, self.deadline)
        if len(rx) > _MAX_TERMINAL_CHARS:
            raise SchemaTooComplex(
                f"a terminal of the schema's grammar is {len(rx):,} characters of regex (limit "
                f"{_MAX_TERMINAL_CHARS:,}): a value with many alternatives or counted parts next to a "
                "recursive or unconstrained one",
                budget="max_states",
                limit=_MAX_TERMINAL_CHARS,
            )
        # lark rewrites \\" inside /.../ to \" (a bare quote): spell every quote as \x22 instead
        return "/" + rx.replace('"', "\\x22") + "/"

    def maybe_term(self, node: Node) -> str:
        if node == EMPTY:
            return ""
        if node == NEVER:
            raise SchemaError("an empty language inside the schema's grammar")
        if nullable(node):
            ne = nonempty(node)
            return "" if ne == NEVER else "[" + self.term(ne) + "]"
        return self.term(node)

    def expr(self, node: Node) -> str:
        if not has_ref(node, self.memo):
            return self.split(node)
        if isinstance(node, Ref):
            if node.name == "json_value":
                self.need_json = True
            return node.name
        if isinstance(node, Val):
            return self.expr(node.item)
        if isinstance(node, Seq):
            return self.split(node)
        if isinstance(node, Alt):
            if any(unval(i) == _ANY for i in node.items):
                # any value already holds every alternative: keep it alone, or its terminals would
                # compete with theirs for the same text
                self.need_json = True
                return "[json_value]" if any(nullable(i) for i in node.items) else "json_value"
            return self.alternatives(node)
        if isinstance(node, Rep):
            return _rep_text(self.group(node.item), node.lo, node.hi)
        if isinstance(node, Members):
            return self.members(node)
        raise TypeError(f"{type(node).__name__} cannot hold a grammar reference")

    def split(self, node: Node) -> str:
        """The text cut into JSON lexemes: punctuation, ``"key":``, one scalar value per terminal.

        Lexeme pieces collect in a segment (a string's quotes and content, a number's digits) that
        becomes one terminal at the next punctuation, colon, value or rule.
        """
        parts: list[str] = []
        seg: list[Node] = []
        state = {"string": False, "esc": False}
        self._emit(node, parts, seg, state)
        self._flush(parts, seg)
        return " ".join(parts)

    def _flush(self, parts: list[str], seg: list[Node]) -> None:
        if seg:
            t = self.maybe_term(seq(*seg))
            if t:
                parts.append(t)
            seg.clear()

    def _emit(self, node: Node, parts: list[str], seg: list[Node], state: dict) -> None:
        if isinstance(node, Lit):
            self._emit_lit(node.text, parts, seg, state)
        elif isinstance(node, Seq):
            for it in node.items:
                self._emit(it, parts, seg, state)
        elif state["string"] or is_lexeme(node, self.lex_memo):
            seg.append(node)  # characters of the current string or number
        else:
            self._flush(parts, seg)
            if has_ref(node, self.memo):
                t = self.group(node)
            elif isinstance(node, Val):
                t = self.value_rule(node)
            elif isinstance(node, Members):
                t = self.members(node)
            elif isinstance(node, Alt):
                t = self.alternatives(node)
            elif isinstance(node, Rep):
                t = _rep_text(_wrap(self.split(node.item)), node.lo, node.hi)
            else:
                t = self.maybe_term(node)
            if t:
                parts.append(t)

    def value_rule(self, node: Val) -> str:
        """A structured regular value as its own rule, one per distinct value: the grammar stays
        linear in the tree (lark would multiply out groups inlined side by side)."""
        name = self.values.get(node)
        if name is None:
            body = self.split(node.item)
            if " " not in body:
                return body
            name = self.values[node] = f"v{len(self.values)}"
            self.extra.append(f"{name}: {body}")
        return name

    def _emit_lit(self, text: str, parts: list[str], seg: list[Node], state: dict) -> None:
        """Literal text, cut after each punctuation mark and after a key's colon."""
        buf = ""
        for ch in text:
            if state["string"]:
                buf += ch
                if state["esc"]:
                    state["esc"] = False
                elif ch == "\\":
                    state["esc"] = True
                elif ch == '"':
                    state["string"] = False
            elif ch in "{}[],":
                if buf:
                    seg.append(lit(buf))
                    buf = ""
                self._flush(parts, seg)
                parts.append(json.dumps(ch))
            elif ch == ":":
                seg.append(lit(buf + ch))
                buf = ""
                self._flush(parts, seg)
            else:
                buf += ch
                if ch == '"':
                    state["string"] = True
        if buf:
            seg.append(lit(buf))

    def alternatives(self, node: Alt) -> str:
        """Alternatives grouped by how they start, so one token decides between the groups.

        Regular scalars (and keys) become one union terminal; the one object and the one array are
        split (besides the empty ``{}``/``[]``). Where several structured alternatives start alike,
        splitting them would make LALR choose before the text tells them apart: the regular ones stay
        one union terminal (the ones with rules are spelled out, as they must be).
        """
        optional = False
        groups: dict[str, list[Node]] = {}
        for it in node.items:
            if it == EMPTY:
                optional = True
                continue
            f = firsts(it)
            groups.setdefault(next(iter(f)) if len(f) == 1 else "?", []).append(it)
        alts: list[str] = []
        for kind, items in groups.items():
            regular = [i for i in items if not has_ref(i, self.memo)]
            structured = [i for i in items if not (isinstance(i, Lit) and i.text in ("{}", "[]"))]
            if kind in "{[" and len(regular) < len(items):
                # beside an object or array the parser builds from { [ tokens, a regular one must be
                # built from the same tokens: a whole-value terminal starting with { would swallow them
                alts.extend(self.split(i.item if isinstance(i, Val) else i) for i in items)
                continue
            if (
                kind == "?"
                or (
                    len(structured) > 1
                    and not (kind == "s" and all(is_lexeme(i, self.lex_memo) for i in items))
                )
                or (kind == "s" and len(regular) > 1)
            ):
                alts.extend(self.expr(i) for i in items if i not in regular)
            else:
                alts.extend(self.split(i.item if isinstance(i, Val) else i) for i in items)
                continue
            if regular:  # one terminal for the alike-starting regular alternatives (as before)
                merged = alt(
                    *sorted(
                        (i.item if isinstance(i, Val) else i for i in regular),
                        key=lambda n: longest_first(n, self.deadline),
                    )
                )
                if nullable(merged):
                    optional = True
                    merged = nonempty(merged)
                if merged != NEVER:
                    alts.append(self.term(merged))
        if any(a == "" for a in alts):
            optional = True
        body = " | ".join(dict.fromkeys(a for a in alts if a))
        if not body:
            return ""
        return f"[{body}]" if optional else f"({body})"

    def group(self, node: Node) -> str:
        text = self.expr(node)
        if isinstance(node, Rep) and (node.lo, node.hi) == (0, 1) and has_ref(node, self.memo):
            return text  # already bracketed: [x]
        return _wrap(text)

    def members(self, m: Members) -> str:
        """One rule per (item, occurrences, count, started) state, as the automaton has."""
        self.n_members += 1
        tag = f"m{self.n_members}"
        items, n = m.items, len(m.items)
        sat = (m.max_count + 1) if m.max_count is not None else m.min_count
        names: dict[tuple, str] = {}
        todo: list[tuple] = []

        def name(key: tuple) -> str:
            r = names.get(key)
            if r is None:
                r = names[key] = f"{tag}_{len(names)}"
                todo.append(key)
            return r

        start = name((0, 0, 0, False))
        prods: dict[tuple, list[tuple[str, tuple | None]]] = {}
        while todo:
            key = todo.pop()
            i, k, c, started = key
            out: list[tuple[str, tuple | None]] = []
            if i == n:
                if c >= m.min_count and (m.max_count is None or c <= m.max_count):
                    out.append(("", None))
            else:
                node, lo, hi = items[i]
                if k >= lo:
                    nxt = (i + 1, 0, c, started)
                    name(nxt)
                    out.append(("", nxt))
                c2 = min(c + 1, sat)
                if not (hi is not None and k >= hi) and not (m.max_count is not None and c2 > m.max_count):
                    k2 = min(k + 1, lo) if hi is None else k + 1
                    one = seq(m.sep, node) if started else node
                    nxt = (i, k2, c2, True)
                    name(nxt)
                    out.append((self.expr(one), nxt))
            prods[key] = out
        # keep states from which the end is reachable
        live: set[tuple] = set()
        changed = True
        while changed:
            changed = False
            for key, out in prods.items():
                if key not in live and any(nxt is None or nxt in live for _, nxt in out):
                    live.add(key)
                    changed = True
        if (0, 0, 0, False) not in live:
            raise SchemaError("object members admit no combination (minProperties/maxProperties/required)")
        for key, rule in names.items():
            if key not in live:
                continue
            alts = []
            for text, nxt in prods[key]:
                if nxt is not None and nxt not in live:
                    continue
                alts.append((text + " " + (names[nxt] if nxt is not None else "")).strip())
            self.extra.append(f"{rule}: " + " | ".join(alts))
        return start


_JSON_RULES = """\
json_value: json_object | json_array | {scalar}
json_object: "{{" [json_pair ("," json_pair)*] "}}"
json_pair: {key} json_value
json_array: "[" [json_value ("," json_value)*] "]"
"""


def to_lark(root: Node, rules: dict[str, Node], max_string_length: int | None = None, limits=None) -> str:
    """Lark text: ``start`` is ``root``; each rule of ``rules`` is a ``$ref`` target.

    Rules whose language is empty (a ``$ref`` to ``false``, contradictory definitions) are removed
    with every alternative that needs them. Raises `SchemaError` when nothing is left.
    """
    prod: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, body in rules.items():
            if name not in prod and productive(body, prod):
                prod.add(name)
                changed = True
    rules = {name: drop_unproductive(body, prod) for name, body in rules.items() if name in prod}
    root = drop_unproductive(root, prod)
    if root == NEVER:
        raise SchemaError("the schema admits no JSON document at all (its constraints contradict each other)")
    w = _Writer(limits.deadline() if limits is not None else None)
    try:
        lines = [f"start: {w.expr(root) or chr(34) * 2}"]
        for name, node in rules.items():
            lines.append(f"{name}: {w.expr(node) or chr(34) * 2}")
    except SchemaError:
        raise
    except SpecTooComplex:
        raise
    except ValueError as exc:  # an intersection inside a terminal that turned out empty
        raise UnsupportedSchema(
            f"a part of the schema admits no value only once its constraints are intersected ({exc}); the "
            "grammar engine needs each alternative's language to be non-empty",
            None,
            "",
        ) from None
    lines.extend(w.extra)
    if w.need_json:
        string = seq(lit('"'), Enc(rep(Cls(ANY_CHAR), 0, max_string_length), True), lit('"'))
        scalar = alt(lit("null"), lit("true"), lit("false"), number_node(Bounds()), string)
        lines.append(_JSON_RULES.format(scalar=w.term(scalar), key=w.term(seq(string, lit(":")))).rstrip())
    return "\n".join(lines) + "\n"
