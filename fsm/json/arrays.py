"""Array languages: ``prefixItems``/``items``/``additionalItems``, ``min``/``maxItems``, ``contains``
(with ``minContains``, and ``maxContains`` where the ``contains`` schema has an exact negation) and
``uniqueItems`` over a finite item set (in exact mode over any items: `unique_items`).
"""

from __future__ import annotations

import itertools

from ..automata import EMPTY, NEVER, Guard, Members, Node, Val, alt, lit, opt, rep, seq
from ..errors import SchemaError
from .context import Context, Loc
from .keywords import count, sees
from .negation import NO_NEGATION, negation
from .unique_items import unique_check
from .values import finite_values

_CONTAINS_KW = ("contains", "minContains", "maxContains")


def array_language(t: Context, schemas: list[Loc], depth: int, item_check: Guard | None = None) -> Node:
    """The arrays valid against every schema in ``schemas`` (already flattened); ``item_check``
    after every item (`unique_items`)."""
    prefixes, rests = _item_locs(t, schemas)
    min_i = max(
        [count(f.schema["minItems"], "minItems", f) for f in schemas if "minItems" in f.schema] or [0]
    )
    maxes = [count(f.schema["maxItems"], "maxItems", f) for f in schemas if "maxItems" in f.schema]
    max_i = min(maxes) if maxes else None
    n = max((len(p) for p in prefixes), default=0)
    if max_i is not None:
        n = min(n, max_i)

    def locs_at(i: int) -> list[Loc]:
        out = []
        for p, r in zip(prefixes, rests, strict=True):
            if i < len(p):
                out.append(p[i])
            elif r is not None:
                out.append(r)
        return out

    contains = [f for f in schemas if "contains" in f.schema]
    unique = any(f.schema.get("uniqueItems") is True for f in schemas)
    rest_locs = [r for r in rests if r is not None]
    rest_allowed = max_i is None or max_i > n
    if any(r.schema is False for r in rest_locs):
        rest_allowed = False
    if unique and (max_i is None or max_i > 1):
        return _unique_array(t, schemas, prefixes, rest_locs, min_i, max_i, depth)
    if contains:
        elem_locs = [locs_at(i) for i in range(n)]
        return _contains_array(t, schemas, contains, elem_locs, rest_locs, min_i, max_i, depth)

    elems = [t.value(locs_at(i), depth + 1) for i in range(n)]
    # rest elements beyond the prefix
    k_hi = None if max_i is None else max_i - n
    if rest_allowed and (k_hi is None or k_hi > 0):
        rest_locs = [r for r in rest_locs if r.schema is not True]
        rest = t.value(rest_locs, depth + 1) if rest_locs else t.any_value(depth + 1, schemas[0])
    else:
        rest = NEVER
        k_hi = 0
    if item_check is not None:
        elems = [seq(e, item_check) for e in elems]
        rest = seq(rest, item_check)
    if n < min_i and rest == NEVER:
        return NEVER
    body = _elements(elems, rest, k_hi, lit(t.layout.sep(depth)), max(min_i, 1))
    return t.layout.container("[", "]", body, min_i == 0, depth)


def _item_locs(t: Context, schemas: list[Loc]) -> tuple[list[list[Loc]], list[Loc | None]]:
    """Per schema: the prefix item schemas, and the schema of the items after them (None: any)."""
    prefixes: list[list[Loc]] = []
    rests: list[Loc | None] = []
    for f in schemas:
        s = f.schema
        prefix: list[Loc] = []
        rest: Loc | None = None
        items = s.get("items")
        if "prefixItems" in s:
            if not isinstance(s["prefixItems"], list):
                raise SchemaError(f"prefixItems at {f.ptr or '/'} must be an array")
            prefix = [f.at("prefixItems", i) for i in range(len(s["prefixItems"]))]
        if isinstance(items, list):
            prefix = [f.at("items", i) for i in range(len(items))]
            if "additionalItems" in s:
                rest = f.at("additionalItems")
        elif items is not None:
            rest = f.at("items")
        if rest is None and "unevaluatedItems" in s and s["unevaluatedItems"] is not True:
            prefix, rest = _unevaluated_items(t, f, prefix, schemas)
        prefixes.append(prefix)
        rests.append(rest)
    return prefixes, rests


def _unevaluated_items(
    t: Context, f: Loc, prefix: list[Loc], schemas: list[Loc]
) -> tuple[list[Loc], Loc | None]:
    """``f``'s items when it has ``unevaluatedItems`` and no items of its own: the items past what the
    conjuncts it sees evaluate (their longest prefix; all of them when one has ``items`` or an
    ``unevaluatedItems`` of its own) must satisfy it, or (2020-12 on) one of the ``contains`` schemas
    it sees, which evaluate the items they match. Conjuncts it does not see (`sees`) are checked
    again by it, which only rejects more."""
    seen = [g for g in schemas if g is not f and sees(f, g)]
    for g in seen:
        items = g.schema.get("items")
        if isinstance(items, (dict, bool)) or (isinstance(items, list) and "additionalItems" in g.schema):
            return prefix, None
        if "unevaluatedItems" in g.schema:  # a nested one evaluates every item its siblings leave
            return prefix, None
    n = max(
        [len(prefix)]
        + [len(g.schema.get("prefixItems") or []) for g in seen]
        + [len(g.schema["items"]) for g in seen if isinstance(g.schema.get("items"), list)]
    )
    padded = prefix + [Loc(True, f.ptr, f.base)] * (n - len(prefix))
    rest = f.at("unevaluatedItems")
    matched = [g.at("contains") for g in [f, *seen] if "contains" in g.schema] if t.draft >= 2020 else []
    if not matched:
        return padded, rest
    # an item either matches some contains or meets unevaluatedItems: branches placed where they sit
    branches = tuple((c,) for c in matched) + (((rest,),) if rest.schema is not False else ())
    either = {"anyOf": [b[0].schema for b in branches]}
    return padded, Loc(either, rest.ptr, rest.base, refs=rest.refs, branches=branches)


def _elements(elems: list[Node], rest: Node, k_hi: int | None, sep: Node, min_count: int) -> Node:
    """The prefix ``elems`` then at most ``k_hi`` ``rest`` items, ``sep``-separated, at least
    ``min_count`` (>= 1) items in all."""
    n = len(elems)
    lo_rest = max(0, min_count - n)
    if rest == NEVER:
        tail = EMPTY if lo_rest == 0 else NEVER
    elif n == 0:
        hi1 = None if k_hi is None else k_hi - 1
        tail = seq(rest, rep(seq(sep, rest), max(lo_rest - 1, 0), hi1))
        if lo_rest == 0:
            tail = opt(tail)
    else:
        tail = rep(seq(sep, rest), lo_rest, k_hi)
    node = tail
    for i in range(n - 1, -1, -1):
        node = seq(sep if i > 0 else EMPTY, elems[i], node)
        if i >= min_count:
            node = opt(node)
    return node


def _unique_array(t: Context, schemas, prefixes, rest_locs, min_i, max_i, depth) -> Node:
    """uniqueItems over a finite item set: the items in a fixed order, each at most once; over
    others, in exact mode, a check after each item (`unique_items`)."""
    values = None if any(prefixes) or not rest_locs else finite_values(t, rest_locs)
    if values is None:
        plain = [f.without("uniqueItems") for f in schemas]
        if t.policy.exact and not t.regex_text and not any("contains" in f.schema for f in schemas):
            return array_language(t, plain, depth, Guard(unique_check, required_by="uniqueItems"))
        loc = next(f for f in schemas if f.schema.get("uniqueItems") is True)
        t.unsupported(
            "uniqueItems",
            loc,
            "enforced only for items drawn from a finite set (enum/const), or in exact mode",
        )
        return array_language(t, plain, depth)
    items = tuple((lit(t.layout.dump(v, depth + 1)), 0, 1) for v in values)
    if len(items) < min_i:
        return NEVER
    if not items:
        return lit("[]") if min_i == 0 else NEVER
    body = Members(items, lit(t.layout.sep(depth)), max(min_i, 1), max_i)
    return t.layout.container("[", "]", body, min_i == 0, depth)


def _contains_array(t: Context, schemas, contains, elem_locs, rest_locs, min_i, max_i, depth) -> Node:
    """contains with minContains only: that many items drawn from (items ∧ contains), anywhere
    (``elem_locs``: the schemas of each prefix item)."""
    loc = contains[0]
    mins = [count(f.schema.get("minContains", 1), "minContains", f) for f in contains]
    min_c = max(mins)
    required = [f for f, m in zip(contains, mins, strict=True) if m > 0]
    max_cs = [f.schema["maxContains"] for f in contains if "maxContains" in f.schema]
    binding = max_cs and (max_i is None or min(count(m, "maxContains", loc) for m in max_cs) < max_i)
    if elem_locs and not binding and min_c <= 1 and len(required) <= 1:
        plain = [f.without(*_CONTAINS_KW) for f in schemas]
        if not required:  # minContains 0 asserts nothing (what contains evaluates is read already)
            return array_language(t, plain, depth)
        return _prefixed_contains(t, elem_locs, rest_locs, required[0], (min_i, max_i), depth)
    prefixes = elem_locs
    if binding and not any(prefixes) and len(contains) == 1:
        node = _bounded_contains(
            t, loc, rest_locs, min_c, count(max_cs[0], "maxContains", loc), min_i, max_i, depth
        )
        if node is not None:
            return node
    if any(prefixes) or binding:
        t.unsupported(
            "contains",
            loc,
            "enforced only without prefixItems, and with a binding maxContains only when the contains "
            f"schema has an exact negation and maxContains is at most {MAX_CONTAINS}",
        )
        return array_language(
            t,
            [f.without(*_CONTAINS_KW) for f in schemas],
            depth,
        )
    base = [r for r in rest_locs if r.schema is not True]
    item = t.value(base, depth + 1) if base else t.any_value(depth + 1, loc)
    if len(contains) > 1 and max(mins) <= 1 and len(required) <= MAX_SEVERAL:
        return _several_contains(t, base, item, required, min_i, max_i, depth)
    hit = t.value(base + [f.at("contains") for f in contains], depth + 1)
    if min_c == 0:
        hit = NEVER
    sep = lit(t.layout.sep(depth))
    if hit == NEVER and min_c > 0:
        return NEVER
    if _unval(hit) == _unval(item) and min_c > 0:
        # every item matches contains (contains: true, or implied by items): just a count
        body = Members(((item, max(min_i, min_c), max_i),), sep, max(min_i, min_c, 1), max_i)
        return t.layout.container("[", "]", body, False, depth)
    seq_items: list[tuple[Node, int, int | None]] = []
    for _ in range(min_c):
        seq_items.append((item, 0, None))
        seq_items.append((hit, 1, 1))
    seq_items.append((item, 0, None))
    if max_i is not None and max_i < min_c:
        return NEVER
    body = Members(tuple(seq_items), sep, max(min_i, 1), max_i)
    return t.layout.container("[", "]", body, min_i == 0 and min_c == 0, depth)


def _prefixed_contains(t: Context, elem_locs, rest_locs, c: Loc, counts: tuple, depth: int) -> Node:
    """Arrays with prefix items (``elem_locs``) and an item matching ``c``'s contains: the first
    such item one of the prefix's, or one after it."""
    min_i, max_i = counts
    n, sep = len(elem_locs), lit(t.layout.sep(depth))
    elems = [t.value(ls, depth + 1) for ls in elem_locs]
    base = [r for r in rest_locs if r.schema is not True]
    k_hi = None if max_i is None else max_i - n
    item = NEVER if k_hi == 0 else t.value(base, depth + 1) if base else t.any_value(depth + 1, c)
    out = []
    for i in range(n):
        hit = t.value([*elem_locs[i], c.at("contains")], depth + 1)
        if hit != NEVER:
            its = [*elems[:i], hit, *elems[i + 1 :]]
            out.append(_elements(its, item, k_hi if item != NEVER else 0, sep, max(min_i, i + 1)))
    hit = NEVER if item == NEVER else t.value([*base, c.at("contains")], depth + 1)
    if hit != NEVER and NEVER not in elems:
        tail = Members(((item, 0, None), (hit, 1, 1), (item, 0, None)), sep, max(min_i - n, 1), k_hi)
        node = tail
        for e in reversed(elems):
            node = seq(e, sep, node)
        out.append(node)
    return t.layout.container("[", "]", alt(*out), False, depth) if out else NEVER


# several contains (each matched once) as a union over the orders their first matches come in (13
# for 3); more are met by one item matching them all (sound: only stricter)
MAX_SEVERAL = 3


def _several_contains(
    t: Context, base: list[Loc], item: Node, required: list[Loc], min_i, max_i, depth
) -> Node:
    """Arrays where every ``contains`` of ``required`` matches some item: for each way their first
    matches fall (in order, several on one item), those items meeting them, any items around."""
    sep = lit(t.layout.sep(depth))
    out = []
    for groups in _ordered_partitions(tuple(required)):
        hits = [t.value(base + [f.at("contains") for f in g], depth + 1) for g in groups]
        if NEVER in hits:
            continue
        seq_items: list[tuple[Node, int, int | None]] = [(item, 0, None)]
        for h in hits:
            seq_items += [(h, 1, 1), (item, 0, None)]
        if max_i is not None and max_i < len(hits):
            continue
        body = Members(tuple(seq_items), sep, max(min_i, 1), max_i)
        out.append(t.layout.container("[", "]", body, min_i == 0 and not hits, depth))
    return alt(*out) if out else NEVER


def _ordered_partitions(xs: tuple) -> list[list[tuple]]:
    """Every way to split ``xs`` into groups, in every order of the groups.

    >>> len(_ordered_partitions((1, 2))), len(_ordered_partitions((1, 2, 3)))
    (3, 13)
    """
    if not xs:
        return [[]]
    out = []
    for k in range(1, len(xs) + 1):
        for first in itertools.combinations(range(len(xs)), k):
            rest = tuple(x for i, x in enumerate(xs) if i not in first)
            out += [[tuple(xs[i] for i in first), *more] for more in _ordered_partitions(rest)]
    return out


# maxContains above this is refused: the automaton holds a copy of the item per possible match
MAX_CONTAINS = 64


def _bounded_contains(
    t: Context, loc: Loc, rest_locs, min_c: int, max_c: int, min_i, max_i, depth
) -> Node | None:
    """minContains..maxContains items match ``contains``, the others its negation (None: no exact
    negation): misses, then up to ``max_c`` times a match followed by misses."""
    neg = negation(t, loc.schema["contains"], loc.at("contains"), 0)
    if neg is NO_NEGATION or max_c > MAX_CONTAINS:
        return None
    if max_c < min_c:
        return NEVER
    base = [r for r in rest_locs if r.schema is not True]
    hit = t.value([*base, loc.at("contains")], depth + 1)
    if neg is False:
        miss = NEVER
    elif neg is True:
        miss = t.value(base, depth + 1) if base else t.any_value(depth + 1, loc)
    else:
        miss = t.value([*base, Loc(neg, loc.ptr + "/contains", loc.base)], depth + 1)
    items: list[tuple[Node, int, int | None]] = [(miss, 0, None)]
    for j in range(max_c if hit != NEVER else 0):
        items += [(hit, 1 if j < min_c else 0, 1), (miss, 0, None)]
    items = [it for it in items if it[0] != NEVER]
    if (hit == NEVER and min_c > 0) or not items:
        return NEVER if min_i > 0 or min_c > 0 else lit("[]")
    body = Members(tuple(items), lit(t.layout.sep(depth)), max(min_i, min_c, 1), max_i)
    return t.layout.container("[", "]", body, min_i == 0 and min_c == 0, depth)


def _unval(node: Node) -> Node:
    while isinstance(node, Val):
        node = node.item
    return node
