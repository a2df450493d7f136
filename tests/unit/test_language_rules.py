"""Every rule of the language module and of the statement reader, with the examples its row
carries: each ``yes`` example satisfies the rule, no ``no`` example does."""

import pytest

from memory import language, statements

ROWS = [(rule, text, expected)
        for rule in language.RULES + statements.RULES
        for expected, texts in ((True, rule.yes), (False, rule.no))
        for text in texts]


@pytest.mark.parametrize("rule, text, expected", ROWS,
                         ids=[f"{r.name}-{r.lang}-{'yes' if e else 'no'}-{t[:30]}"
                              for r, t, e in ROWS])
def test_rule_row(rule, text, expected):
    assert rule.check(text) is expected


def test_every_rule_has_examples_both_ways_in_both_languages():
    for table in (language.RULES, statements.RULES):
        names = {r.name for r in table}
        for name in names:
            rows = [r for r in table if r.name == name]
            assert {r.lang for r in rows} == {"en", "zh"}, name
            assert all(r.yes and r.no for r in rows), name
