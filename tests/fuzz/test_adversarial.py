"""The adversarial suite in CI: the first two hostile specs of each family of
`tests.fuzz.adversarial.FAMILIES` (its most telling), compiled and their first mask filled in a
forked child, end within max_seconds + 10 % + 0.5 s with a result or a `fsm.SpecError` subclass,
and grow the child's peak RSS by at most 1 GiB. Time is wall time, or the child's CPU time when
that is less: on a loaded machine (other CI jobs, pytest-xdist's other worker) wall time also counts
the wait for a core, which is not the library's; a hang is still caught by the child's timeout.

CI runs it with ``max_seconds=2`` (every other budget at its default) to stay within about a
minute and a half; ``python -m tests.fuzz.adversarial`` runs every spec of every family with the
default limits for the table in docs/limits.md.
"""

from __future__ import annotations

import pytest

import fsm
from tests.fuzz.adversarial import bound, cases, run_case

LIMITS = fsm.Limits(max_seconds=2.0)
CASES = cases(seed=0, per_family=2)


@pytest.mark.parametrize(
    ("family", "spec"), CASES, ids=[f"{family.replace(' ', '_')}-{i}" for i, (family, _) in enumerate(CASES)]
)
def test_hostile_spec_ends_within_its_budget(vocab, family, spec):
    outcome = run_case(family, spec, vocab, LIMITS)
    # the child catches fsm.SpecError alone: anything else is a crash, a hang or a kill
    assert outcome.result == "ok" or outcome.spec_error, outcome
    assert outcome.within(bound(LIMITS)), outcome
    assert outcome.rss_growth <= 1 << 30, outcome
