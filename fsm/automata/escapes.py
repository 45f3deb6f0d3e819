"""The JSON string escapes this library writes for characters that must be escaped."""

from __future__ import annotations

from .language import encoded_char

MUST_ESCAPE = ((0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C))
HEX = ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66))
HEX_NOT_D = ((0x30, 0x39), (0x41, 0x43), (0x45, 0x46), (0x61, 0x63), (0x65, 0x66))


def escape_trie() -> tuple[list[dict[int, int]], dict[int, int]]:
    """A trie of every JSON escape this library writes for a character that must be escaped.

    ``(children, leaf_char)``: node 0 is before the backslash; a leaf maps to its decoded character.
    """
    import re

    from .language import to_regex

    children: list[dict[int, int]] = [{}]
    leaf: dict[int, int] = {}
    for lo, hi in MUST_ESCAPE:
        for c in range(lo, hi + 1):
            rx = re.compile(to_regex(encoded_char(((c, c),), False)))
            short = [chr(c) if chr(c) in '"\\' else {8: "b", 9: "t", 10: "n", 12: "f", 13: "r"}.get(c, "")]
            cands = {"\\" + x for x in short if x} | {
                f"\\u{c:04x}",
                f"\\u{c:04X}",
                f"\\u{c:04x}".upper().replace("\\U", "\\u"),
            }
            hexs = f"{c:04x}"
            if any(ch.isalpha() for ch in hexs):
                cands |= {"\\u" + "".join(v) for v in _case_variants(hexs)}
            for text in sorted(x for x in cands if rx.fullmatch(x)):
                node = 0
                for ch in text:
                    nxt = children[node].get(ord(ch))
                    if nxt is None:
                        nxt = len(children)
                        children.append({})
                        children[node][ord(ch)] = nxt
                    node = nxt
                leaf[node] = c
    return children, leaf


def _case_variants(s: str):
    if not s:
        yield ""
        return
    for rest in _case_variants(s[1:]):
        yield from {s[0].lower() + rest, s[0].upper() + rest}
