"""A scope's text form, and a scope read from another store's export mapped to this store's ids."""

from __future__ import annotations

import pytest

from memory.types import Scope


def test_text_form_round_trips():
    for scope in (Scope.private(3), Scope.group(12)):
        assert Scope.parse(str(scope)) == scope


@pytest.mark.parametrize("text", ["", "user:", "thread:x", "group:4", "user:-1"])
def test_parse_refuses_what_is_no_scope(text):
    with pytest.raises(ValueError):
        Scope.parse(text)


def test_imported_scope_follows_the_new_ids():
    def imported(text):
        return Scope.imported(text, old_user_id=7, new_user_id=2, threads={40: 5})

    assert imported("user:7") == "user:2"           # the exported user's private memory
    assert imported("thread:40") == "thread:5"      # a group thread that was imported
    assert imported("user:8") == "user:8"           # another user's: left as it is
    assert imported("thread:41") == "thread:41"     # a thread the export did not hold
    assert imported("legacy") == "legacy"           # no scope's text form
