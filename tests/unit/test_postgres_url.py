"""A PostgreSQL URL is shown without its password wherever the product prints or logs it."""

from memory.stores.postgres import redacted


def test_the_password_is_replaced_and_everything_else_kept():
    assert (redacted("postgresql://bot:s3cret@db.example:5433/memory?sslmode=require")
            == "postgresql://bot:***@db.example:5433/memory?sslmode=require")
    assert redacted("postgresql://bot:p%40ss@[::1]/memory") == "postgresql://bot:***@[::1]/memory"


def test_a_url_without_a_password_stays_as_it_is():
    url = "postgresql://postgres:@/postgres?host=/tmp/pg"
    assert redacted(url) == url
    assert redacted("postgresql:///memory") == "postgresql:///memory"


def test_an_unparsable_url_is_not_echoed():
    assert redacted("postgresql://bot:pw@host:notaport/db") == "<url>"
