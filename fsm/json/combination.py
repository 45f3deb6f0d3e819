"""``allOf``/``anyOf``/``oneOf``/``not`` over one scalar type's keywords, read as one boolean formula
and evaluated in that type's domain, instead of split into a union of conjunctions.

The translator otherwise splits every ``anyOf``/``oneOf`` into branches, each the conjunction of
the rest with one choice: nested combinations multiply (three ``not allOf`` of three ``not anyOf``
of three patterns are 9^3 conjunctions, each an automaton of its own) and ``oneOf`` intersects
each branch with the negations of the others. When every keyword under the combination is about
strings (``pattern``, lengths) or about integers (an integer ``multipleOf``), the whole is a
boolean function of a few atoms:

- strings: each atom a character DFA, combined bottom-up with every intermediate minimized
  (`fsm.automata.boolean_dfa`), so the result is as small as its language;
- numbers: each atom a set of remainders modulo the least common multiple of the divisors (a bit
  mask), so the whole formula is one remainder automaton with an accepting set computed
  arithmetically (`fsm.automata.integer_residues`), plus whether a non-integral number passes.

Keywords of other types hold vacuously for the type's values (JSON Schema applies them only to
their own type); anything else (``enum``, an asserted ``format``, bounds inside a branch, a
recursive ``$ref``) leaves the schema to the translator's split.

>>> from fsm import JsonSchema
>>> from fsm.automata import node_to_char_dfa
>>> d = node_to_char_dfa(JsonSchema({"type": "integer", "oneOf": [{"multipleOf": 6}, {"multipleOf": 10}]}).node())
>>> [d.accepts(v) for v in ("12", "20", "30", "7")]
[True, True, False, False]
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ..automata import (
    ANY_CHAR,
    NEVER,
    And,
    Auto,
    Budget,
    CharDFA,
    Cls,
    Node,
    alt,
    check_expansion,
    dfa_and,
    dfa_not,
    dfa_or,
    exactly_one,
    integer_residues,
    number_node,
    rep,
    small_dfa,
)
from ..errors import SpecTooComplex, UnsupportedSchema
from .context import Context, Loc
from .keywords import ARRAY_KW, NUMBER_KW, OBJECT_KW, STRING_KW, VOCABULARY, count, meet, type_set, types_of
from .numbers import (
    MAX_REMAINDER_STATES,
    NON_INTEGRAL,
    SIGNIFICANT_DIGITS,
    exact_zero_fraction,
    number_bounds,
    number_digits,
    uncapped_integers,
)
from .patterns import pattern_node
from .strings import string_node

# states one intermediate DFA of a string formula may take: past it, the translator's split decides
MAX_FORMULA_STATES = 20_000
# a positive string formula that splits into at most this many branches is left to the split: a
# union of branch automata is built lazily, the formula's DFAs eagerly
SPLIT_BRANCHES = 16
# a zero-fraction spelling (``6.0``) is only the integer's value while the double holds it exactly;
# its digit count paired with the remainders is kept while this product stays small
ZERO_FRACTION_PRODUCT = 20_000
_OBJECTS = OBJECT_KW | ARRAY_KW | {"dependentSchemas", "dependencies", "dependentRequired"}
_VACUOUS = {"string": _OBJECTS | NUMBER_KW, "number": _OBJECTS | STRING_KW}
_TOP_BOUNDS = {"string": {"minLength", "maxLength"}, "number": NUMBER_KW - {"multipleOf"}}


class _Bail(Exception):
    """The schema leaves the fragment a formula covers: the translator splits it as before."""


def combination_language(t: Context, flat: list[Loc], locs: list[Loc]) -> Node | None:
    """The values valid against every schema in ``locs`` when their conjunction (``flat``) is of one
    scalar type and its ``anyOf``/``oneOf``/``not`` only combine that type's keywords; None otherwise.

    >>> from fsm import JsonSchema
    >>> from fsm.automata import node_to_char_dfa
    >>> s = {"type": "string", "not": {"anyOf": [{"pattern": "a"}, {"pattern": "b"}]}}
    >>> d = node_to_char_dfa(JsonSchema(s, exact=True).node())
    >>> [d.accepts(v) for v in ('"cd"', '"ca"', '"b"')]
    [True, False, False]
    """
    if any(f.excluded is not None for f in locs) or not any(
        isinstance(f.schema, dict) and ("anyOf" in f.schema or "oneOf" in f.schema) for f in flat
    ):
        return None  # nothing the translator would split into branches
    types: set[str] | None = None
    for f in flat:
        if isinstance(f.schema, dict):
            ts = types_of(f.schema, f)
            if ts is None and f.excluded is not None:
                ts = type_set(f.excluded.positive().get("type"))
            if ts is not None:
                types = ts if types is None else meet(types, ts)
    if not types:
        return None
    domain = "string" if types == {"string"} else "number" if types <= {"number", "integer"} else None
    if domain is None:
        return None
    outer: list[Loc] = []
    try:
        formula = ("and", tuple(_formula(t, loc, domain, True, frozenset(), outer) for loc in locs))
        if domain == "string":
            if _branches(formula) <= SPLIT_BRANCHES:
                return None  # a few positive branches: the split's union of automata is cheaper
            return _strings(t, formula, outer)
        return _numbers(t, formula, outer, "number" in types)
    except _Bail:
        return None


def _formula(t: Context, loc: Loc, domain: str, top: bool, seen: frozenset, outer: list[Loc]) -> tuple:
    """``loc``'s schema as a formula over ``domain``'s atoms (`_Bail` outside the fragment); at the
    ``top`` (reached through ``allOf``/``$ref`` only) the domain's bounds go to ``outer``."""
    t.tick()
    s = loc.schema
    if s is True or s is False:
        return ("const", s)
    if not isinstance(s, dict):
        raise _Bail
    if loc.ptr and (isinstance(s.get("$id"), str) or (t.draft <= 4 and isinstance(s.get("id"), str))):
        raise _Bail  # a new base for the refs below: the translator's resolution handles it
    parts: list[tuple] = []
    if "$ref" in s:
        try:
            target, key = t.resolve(s["$ref"], loc)
        except UnsupportedSchema:
            raise _Bail from None
        if key in seen:
            raise _Bail  # recursion: not a finite formula
        parts.append(_formula(t, target, domain, top, seen | {key}, outer))
        if t.draft <= 7:
            return parts[0]  # drafts 4-7: siblings of $ref are ignored
    leaf: dict[str, Any] = {}
    for kw, v in s.items():
        if kw == "allOf" and isinstance(v, list) and v:
            parts += [_formula(t, loc.at(kw, i), domain, top, seen, outer) for i in range(len(v))]
        elif kw in ("anyOf", "oneOf") and isinstance(v, list) and v:
            subs = tuple(_formula(t, loc.at(kw, i), domain, False, seen, outer) for i in range(len(v)))
            parts.append(("or" if kw == "anyOf" else "one", subs))
        elif kw == "not":
            parts.append(("not", _formula(t, loc.at(kw), domain, False, seen, outer)))
        elif kw == "type":
            parts.append(("type", frozenset(type_set(v))))
        elif kw in _TOP_BOUNDS[domain] and top:
            outer.append(Loc({kw: v, **_draft4_exclusive(s, kw)}, loc.ptr, loc.base))
        elif kw in ("pattern", "minLength", "maxLength") and domain == "string":
            leaf[kw] = v
        elif kw == "multipleOf" and domain == "number":
            if type(v) is not int or v <= 0:
                raise _Bail  # a decimal or double divisor: the translator's arithmetic
            leaf[kw] = v
        elif kw == "$ref" or kw in _VACUOUS[domain] or (kw == "format" and not t.policy.assert_format):
            continue
        elif kw in VOCABULARY:
            raise _Bail  # enum, const, an asserted format, if/then/else, nullable, bounds in a branch
    if leaf:
        parts.append(("leaf", leaf, loc))
    return ("and", tuple(parts))


def _branches(f: tuple) -> float:
    """How many conjunctions the translator's split makes of ``f`` (infinite with a ``oneOf`` or a
    ``not`` of a combination: each branch then meets the others' negations)."""
    op = f[0]
    if op == "and":
        return math.prod(_branches(g) for g in f[1])
    if op == "or":
        return sum(_branches(g) for g in f[1])
    if op == "not":  # a negated conjunction of keywords is the union of their complements
        g = f[1]
        atoms = g[1] if g[0] == "and" else (g,)
        return len(atoms) if all(a[0] in ("leaf", "type", "const") for a in atoms) else math.inf
    return math.inf if op == "one" else 1


def _draft4_exclusive(s: dict, kw: str) -> dict:
    """The draft-4 boolean exclusive beside ``minimum``/``maximum`` (it qualifies the bound)."""
    ex = {"minimum": "exclusiveMinimum", "maximum": "exclusiveMaximum"}.get(kw)
    return {ex: True} if ex and s.get(ex) is True else {}


def _walk(f: tuple) -> Iterator[tuple]:
    yield f
    if f[0] in ("and", "or", "one"):
        for g in f[1]:
            yield from _walk(g)
    elif f[0] == "not":
        yield from _walk(f[1])


# -- strings -------------------------------------------------------------------------------------
def _strings(t: Context, formula: tuple, outer: list[Loc]) -> Node:
    """The JSON strings ``formula`` accepts: its DFA in the narrowest reading of every pattern
    (`_eval_strings`), within the top-level lengths (a counter, not states of the DFA)."""
    lo, hi = 0, None
    for f in outer:
        if "minLength" in f.schema:
            lo = max(lo, count(f.schema["minLength"], "minLength", f))
        if "maxLength" in f.schema:
            m = count(f.schema["maxLength"], "maxLength", f)
            hi = m if hi is None else min(hi, m)
    base = t.budget()
    budget = Budget(
        replace(base.limits, max_states=min(base.limits.max_states, MAX_FORMULA_STATES)), base.deadline
    )
    try:
        sure, _ = _eval_strings(t, formula, budget, {})
    except SpecTooComplex as exc:
        if exc.budget == "max_states":
            raise _Bail from None  # a big formula: the translator's split may still share its parts
        raise
    if not any(sure.accepting):
        return NEVER
    body = Auto(tuple(tuple(row) for row in sure.edges), tuple(sure.accepting))
    return string_node(lo, t.opts.max_string_length if hi is None else hi, [body])


def _eval_strings(t: Context, f: tuple, budget: Budget, memo: dict) -> tuple[CharDFA, CharDFA]:
    """(``sure``, ``maybe``): the strings ``f`` accepts in every reading of its patterns, and those it
    accepts in some (Python and ECMA-262 differ on ``.``, ``$``...): a negation swaps them, so the
    result is sound whichever reading the validator uses. One DFA when the readings agree."""
    key = id(f)
    if key in memo:
        return memo[key][0]
    t.tick()
    op = f[0]
    if op == "const":
        d = _all() if f[1] else _none()
        out = (d, d)
    elif op == "type":
        d = _all() if "string" in f[1] else _none()
        out = (d, d)
    elif op == "leaf":
        out = _leaf_dfas(t, f[1], f[2], budget)
    elif op == "not":
        s, m = _eval_strings(t, f[1], budget, memo)
        ns = dfa_not(m, budget)
        out = (ns, ns if s is m else dfa_not(s, budget))
    else:
        subs = [_eval_strings(t, g, budget, memo) for g in f[1]]
        if op == "one":
            s = exactly_one([a for a, _ in subs], [b for _, b in subs], budget)
            exact = all(a is b for a, b in subs)
            out = (s, s if exact else exactly_one([b for _, b in subs], [a for a, _ in subs], budget))
        else:
            combine = dfa_and if op == "and" else dfa_or
            s, m = _all() if op == "and" else _none(), None
            for a, _ in subs:
                s = combine(s, a, budget)
            if all(a is b for a, b in subs):
                m = s
            else:
                m = _all() if op == "and" else _none()
                for _, b in subs:
                    m = combine(m, b, budget)
            out = (s, m)
    memo[key] = (out, f)  # f kept alive: its id stays its own
    return out


def _leaf_dfas(t: Context, leaf: dict, loc: Loc, budget: Budget) -> tuple[CharDFA, CharDFA]:
    """A conjunction of string keywords as DFAs in the narrowest and the widest pattern reading."""
    lengths: list[Node] = []
    lo = count(leaf["minLength"], "minLength", loc) if "minLength" in leaf else 0
    hi = count(leaf["maxLength"], "maxLength", loc) if "maxLength" in leaf else None
    if lo or hi is not None:
        lengths.append(rep(Cls(ANY_CHAR), lo, hi))
    if "pattern" not in leaf:
        d = _dfa(lengths, budget)
        return d, d
    try:
        narrow, wide = pattern_node(leaf["pattern"]), pattern_node(leaf["pattern"], widest=True)
    except UnsupportedSchema:
        raise _Bail from None  # the translator reports it where it splits
    check_expansion(narrow, t.limits, f"the pattern at {loc.ptr}/pattern")
    d = _dfa([narrow, *lengths], budget)
    return d, d if wide == narrow else _dfa([wide, *lengths], budget)


def _dfa(parts: list[Node], budget: Budget) -> CharDFA:
    if not parts:
        return _all()
    return small_dfa(parts[0] if len(parts) == 1 else And(tuple(parts)), budget)


def _all() -> CharDFA:
    return CharDFA([[(lo, hi, 0) for lo, hi in ANY_CHAR]], [True])


def _none() -> CharDFA:
    return CharDFA([[]], [False])


# -- numbers -------------------------------------------------------------------------------------
def _numbers(t: Context, formula: tuple, outer: list[Loc], fractions: bool) -> Node:
    """The JSON numbers ``formula`` accepts (integers only unless ``fractions``): an integer by its
    remainder modulo the divisors' least common multiple, a non-integral number by the formula
    with every ``multipleOf`` false (no integer divides it)."""
    divisors = sorted({g[1]["multipleOf"] for g in _walk(formula) if g[0] == "leaf"})
    lcm = math.lcm(*divisors) if divisors else 1
    cap = min(MAX_REMAINDER_STATES, t.limits.max_states) // 4
    if lcm + 3 > cap:
        raise _Bail  # the translator's per-divisor automata may still do
    ints, other = _eval_numbers(t, formula, lcm, {})
    b = number_bounds(outer)
    node: Node = NEVER
    if ints:
        node = integer_residues(lcm, lambda r: bool(ints >> r & 1))
        if (
            t.policy.number_spellings
            and t.draft > 4
            and lcm * (SIGNIFICANT_DIGITS + 2) <= ZERO_FRACTION_PRODUCT
        ):
            node = exact_zero_fraction(node)  # the double of a short integer is exact
        if b.bounded:
            node = And((uncapped_integers(b), node))
    if other and fractions:
        node = alt(node, And((number_node(b, number_digits(t, True)), NON_INTEGRAL)))
    return node


def _eval_numbers(t: Context, f: tuple, lcm: int, memo: dict) -> tuple[int, bool]:
    """(the remainders modulo ``lcm`` of the integers ``f`` accepts as a bit mask, whether it
    accepts a non-integral number)."""
    full = (1 << lcm) - 1
    t.tick()
    op = f[0]
    if op == "const":
        return (full, True) if f[1] else (0, False)
    if op == "type":
        return (full if f[1] & {"number", "integer"} else 0, "number" in f[1])
    if op == "leaf":
        m = f[1]["multipleOf"]
        mask = memo.get(m)
        if mask is None:  # bit r set when m divides r: the pattern 10..0 (m digits) read right to left
            mask = memo[m] = int(("0" * (m - 1) + "1") * (lcm // m), 2)
        return mask, False
    if op == "not":
        ints, other = _eval_numbers(t, f[1], lcm, memo)
        return full ^ ints, not other
    subs = [_eval_numbers(t, g, lcm, memo) for g in f[1]]
    if op == "and":
        ints, other = full, True
        for a, b in subs:
            ints, other = ints & a, other and b
        return ints, other
    if op == "or":
        ints, other = 0, False
        for a, b in subs:
            ints, other = ints | a, other or b
        return ints, other
    none, one = (full, True), (0, False)  # oneOf: none of the branches so far; exactly one of them
    for a, b in subs:
        one = ((one[0] & ~a) | (none[0] & a), (one[1] and not b) or (none[1] and b))
        none = (none[0] & ~a, none[1] and not b)
    return one[0] & full, one[1]
