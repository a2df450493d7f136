import pytest

from memory.redact import describe_redaction, redact


@pytest.mark.parametrize("text, kind, secret", [
    ("my password is hunter22!", "password", "hunter22"),
    ("pwd: S3cr3t-Value", "password", "S3cr3t-Value"),
    ("我的密码是abc12345", "password", "abc12345"),
    ("use key sk-ant-api03-abcdefghijklmnopqrstuv", "api key", "abcdefghijklmnopqrstuv"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123", "api key", "ghp_abcdefghij"),
    ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "api key", "AAHdqTcvCH1vGWJx"),
    ("card 4111 1111 1111 1111 please", "card number", "4111 1111"),
    ("身份证11010519491231002X", "ID number", "11010519491231002X"),
    ("passport number X1234567", "ID number", "X1234567"),
    ("ssn 078-05-1120", "ID number", "078-05-1120"),
])
def test_secrets_are_replaced(text, kind, secret):
    result = redact(text)
    assert kind in result.kinds
    assert secret not in result.text
    assert f"[redacted {kind}]" in result.text


@pytest.mark.parametrize("text", [
    "I upgraded to Python 3.11.7 on 2024-05-01",
    "It cost $1,250 and 300 yuan",
    "I paid 1234567890123 yuan",  # fails Luhn: not a card
    "meet at 221 Baker Street at 10:30",
    "我的生日是5月3日",
])
def test_ordinary_numbers_are_kept(text):
    result = redact(text)
    assert result.text == text
    assert result.kinds == ()


def test_description_names_the_kinds_in_the_users_language():
    assert "password" in describe_redaction(("password",), "en")
    assert "密码" in describe_redaction(("password",), "zh")
    assert describe_redaction((), "en") == ""
