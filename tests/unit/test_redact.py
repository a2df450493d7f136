import pytest

from bot.engine import redaction_note
from memory.redact import redact


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
    # words after "passport" are not a passport number (a new user's trial: "before" was redacted)
    "I also have to renew my passport before the trip.",
    "My passport expires tomorrow.",
    "我的护照过期了",
])
def test_ordinary_numbers_are_kept(text):
    result = redact(text)
    assert result.text == text
    assert result.kinds == ()


def test_description_names_the_kinds_in_the_users_language():
    assert "password" in redaction_note(("password",), "en")
    assert "密码" in redaction_note(("password",), "zh")
    assert redaction_note((), "en") == ""


# The privacy table: every secret is redacted, every look-alike is kept verbatim.
SECRETS = [
    # passwords and credentials
    ("my password is hunter22!", "password", "hunter22"),
    ("Password: correct-horse-battery-9", "password", "correct-horse"),
    ("the wifi passcode = Tr0ub4dor&3", "password", "Tr0ub4dor"),
    ("my pin is 4921", "password", "4921"),
    ("log in with https://admin:s3cretPass@db.example.com/app", "password", "s3cretPass"),
    ("我的密码是abc12345", "password", "abc12345"),
    ("邮箱密码：Qw!7xZp2", "password", "Qw!7xZp2"),
    ("口令为 zhimakaimen88", "password", "zhimakaimen88"),
    # private keys
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9\n-----END RSA PRIVATE KEY-----",
     "private key", "MIIEowIBAAKCAQEA7bq9"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
     "private key", "b3BlbnNzaC1rZXktdjEAAAAA"),
    ("my wallet private key is 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
     "private key", "4c0883a69102937d"),
    ("AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS", "private key",
     "QYQSZQGPQYQSZQGP"),
    ("私钥是 5Kb8kLf9zgWQnogidDA76MzPL6TsZZY36hWXMssSzNydYXYB9KF", "private key", "5Kb8kLf9zgWQ"),
    # API keys and provider tokens
    ("use key sk-ant-api03-abcdefghijklmnopqrstuv", "api key", "abcdefghijklmnopqrstuv"),
    ("OPENAI key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t", "api key", "Ab3dEf6hIj9kLm2n"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123", "api key", "ghp_abcdefghij"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "api key", "11ABCDEFG0123456789"),
    ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "api key", "AAHdqTcvCH1vGWJx"),
    ("slack xoxb-1234567890-abcdefghijkl", "api key", "xoxb-1234567890"),
    ("AWS AKIAIOSFODNN7EXAMPLE", "api key", "AKIAIOSFODNN7EXAMPLE"),
    ("maps AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "api key", "AIzaSyA1b2C3d4E5"),
    ("stripe sk_live_51HxYzAbCdEfGhIjKlMnOp", "api key", "51HxYzAbCdEfGhIj"),
    ("gitlab glpat-xY7_abcdefghij1234567890", "api key", "glpat-xY7"),
    ("npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "api key", "a1B2c3D4e5F6g7H8"),
    ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "api key", "AbCdEfGhIjKlMnOp"),
    ("SG.abcdefghijklmnop1234.ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefg", "api key", "ABCDEFGHIJKLMNOP"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abcdef0123456789", "api key", "eyJhbGciOiJIUzI1"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "api key", "dozjgNryP4"),
    ("the api key is 8f14e45fceea167a5a36dedd4bea2543", "api key", "8f14e45fceea167a"),
    ("密钥是 AbC123xyz789QwE", "api key", "AbC123xyz789"),
    # one-time codes
    ("your verification code is 482913", "one-time code", "482913"),
    ("OTP: 7741", "one-time code", "7741"),
    ("2FA code 90210455", "one-time code", "90210455"),
    ("验证码是 482913，五分钟内有效", "one-time code", "482913"),
    ("动态码：660218", "one-time code", "660218"),
    # payment cards (Luhn-valid) and IBANs (mod-97-valid)
    ("card 4111 1111 1111 1111 please", "card number", "4111 1111"),
    ("charge 5555-5555-5555-4444 tomorrow", "card number", "5555-5555"),
    ("amex 378282246310005", "card number", "378282246310005"),
    ("我的卡号是6011111111111117", "card number", "6011111111111117"),
    ("IBAN DE89 3704 0044 0532 0130 00", "IBAN", "3704 0044"),
    ("pay to GB82WEST12345698765432", "IBAN", "GB82WEST1234"),
    ("账户 FR1420041010050500013M02606", "IBAN", "20041010050500013"),
    # resident IDs, SSNs, passports
    ("身份证11010519491231002X", "ID number", "11010519491231002X"),
    ("我的身份证号是 110101199003074477", "ID number", "110101199003074477"),
    ("ID 440306198512151236 on file", "ID number", "440306198512151236"),
    ("ssn 078-05-1120", "ID number", "078-05-1120"),
    ("my social is 219-09-9999", "ID number", "219-09-9999"),
    ("passport number X1234567", "ID number", "X1234567"),
    ("护照号 E12345678", "ID number", "E12345678"),
]

LOOK_ALIKES = [
    # phone numbers
    "call me at +1 (415) 555-0132",
    "my mobile is +86 138 0013 8000",
    "我的手机号是13800138000",
    "office 010-12345678 ext 204",
    "UK number +44 20 7946 0958",
    "phone: +8613912345678",
    # e-mail and street addresses
    "mail me at alice.smith@example.com",
    "我的邮箱是 zhang.san@qq.com",
    "I live at 221B Baker Street, London NW1 6XE",
    "ship it to 1600 Amphitheatre Parkway, Mountain View, CA 94043",
    "地址是北京市朝阳区建国路88号SOHO现代城2号楼1801",
    "上海市浦东新区世纪大道100号",
    # dates and times
    "I upgraded to Python 3.11.7 on 2024-05-01",
    "meet at 221 Baker Street at 10:30",
    "我的生日是5月3日",
    "the deadline is 03/05/2025",
    "会议在2024年12月31日下午3点",
    "born 1990-03-07, moved 2015-09-01",
    # order and tracking numbers
    "order #112-3456789-1234567 shipped",
    "order number 4111111111111111",
    "tracking 1Z999AA10123456784",
    "USPS tracking 9400 1000 0000 0000 0000 00",
    "订单号 4200001234202405011234567",
    "运单号 SF1234567890123",
    "快递单号：773012345678901",
    "订单编号 110101199003074477",
    "booking reference ABC123, flight CA1234",
    # versions and identifiers
    "node v20.11.1 and npm 10.2.4",
    "版本 2.3.1-beta 已发布",
    "commit 3f7cfaa2b1d4e5f60718293a4b5c6d7e8f901234",
    "request id 550e8400-e29b-41d4-a716-446655440000",
    "the server is at 192.168.1.10:8080",
    # prices and amounts
    "It cost $1,250 and 300 yuan",
    "I paid 1234567890123 yuan",  # fails Luhn: not a card
    "the laptop was €1.499,99",
    "价格是 12999 元",
    "budget ¥3,999.00 per month",
    # words that sit near secret labels
    "I use a password manager called Bitwarden",
    "my password changed last week",
    "drop a pin location on the map",
    "the token limit is 4000",
    "secret santa is on Friday",
    "密码已经改过了",
    "验证码没收到",
    "an invalid IBAN GB00WEST12345698765432",
    "the code is in Python",
]


@pytest.mark.parametrize("text, kind, secret", SECRETS)
def test_secret_table_is_redacted(text, kind, secret):
    result = redact(text)
    assert kind in result.kinds, result
    assert secret not in result.text
    assert f"[redacted {kind}]" in result.text


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alike_table_is_kept(text):
    result = redact(text)
    assert result.text == text
    assert result.kinds == ()


def test_tables_are_large_enough_and_bilingual():
    def cjk(t):
        return any("\u4e00" <= c <= "\u9fff" for c in t)
    assert len(SECRETS) >= 40 and len(LOOK_ALIKES) >= 40
    assert sum(cjk(t) for t, _, _ in SECRETS) >= 8 and sum(cjk(t) for t in LOOK_ALIKES) >= 8
    assert {k for _, k, _ in SECRETS} >= {
        "password", "private key", "api key", "one-time code", "card number", "IBAN", "ID number"}


def test_new_kinds_are_described_in_chinese():
    text = redaction_note(("IBAN", "one-time code", "private key"), "zh")
    assert "验证码" in text and "私钥" in text and "IBAN" in text


# Credentials in ordinary words: a credential noun, an optional "for X" / "of X" / "to X"
# phrase, then "is" / ":" / 是 and the value.
CREDENTIAL_SECRETS = [
    ("the password for my laptop is tr0ub4dorZZ", "password", "tr0ub4dorZZ"),
    ("my bank login is alex / Zebra-Kiwi-77", "password", "Zebra-Kiwi-77"),
    ("The password to my email account is sunflower.", "password", "sunflower"),
    ("the wifi password at the cabin is LakeHouse2024", "password", "LakeHouse2024"),
    ("the PIN for my debit card is 4321", "password", "4321"),
    ("the passcode of my phone is 908172", "password", "908172"),
    ("my Netflix login: maria.k / Popcorn#55", "password", "Popcorn#55"),
    ("the door code for the office is 4711", "password", "4711"),
    ("the alarm code is 0000#", "password", "0000#"),
    ("the combination for the bike lock is 3-7-2-9", "password", "3-7-2-9"),
    ("the code to the garage is 8812", "password", "8812"),
    ("our network key is Gr33nTea!", "password", "Gr33nTea"),
    ("the passphrase for the backup is purple-otter-salad-41", "password", "purple-otter"),
    ("the master password of my vault was Vault!2019", "password", "Vault!2019"),
    ("my credentials for the portal are jdoe:Spring2025!", "password", "Spring2025"),
    ("the token for the staging server is 9f8e7d6c5b4a3f2e1d0c", "api key", "9f8e7d6c5b4a"),
    ("the client secret for our app is Zx8vQ2mN7pL4kR", "api key", "Zx8vQ2mN7pL4kR"),
    ("我笔记本电脑的密码是 tr0ub4dorZZ", "password", "tr0ub4dorZZ"),
    ("我的银行卡密码一直是 665544", "password", "665544"),
    ("邮箱和网银的密码分别是 Abc-123 和 Kiwi77", "password", "Abc-123"),
    ("公司门禁码是 2580", "password", "2580"),
    ("家里的开门密码：１３５７９", "password", "１３５７９"),
    ("路由器的口令现在是 wifi8899", "password", "wifi8899"),
    ("支付宝的登录密码改成了 Zfb#2024", "password", "Zfb#2024"),
    ("验证码是 AB12CD", "one-time code", "AB12CD"),
    ("保险箱的密码为 9-1-3-5", "password", "9-1-3-5"),
]

CREDENTIAL_LOOK_ALIKES = [
    "my token tk0u50001n10 is fine",
    "the password for the wifi is on the fridge",
    "the password for my laptop is the same as my phone's",
    "the password for this account is changed every month",
    "what is the password for the guest network?",
    "my login is failing since Monday",
    "the login for the portal is broken again",
    "the zip code for my office is 10001",
    "the area code for Vienna is 01",
    "the dress code for the party is smart casual",
    "the promo code is SAVE20",
    "the error code is 0x80070005",
    "the code for this feature is on GitHub",
    "the PIN for the map is at the station",
    "the password policy of our company is strict",
    "I forgot the password to my old phone",
    "the combination of colours is lovely",
    "密码学是一门有趣的学科",
    "密码是什么来着？我忘了",
    "邮政编码是 100080",
    "密码长度是 12 位",
    "Wi-Fi 名称是 Home-5G，密码在路由器背面",
    "我的验证码是不是过期了",
    "登录页面是 https://example.com/login",
    "my login is alice@example.com",
    "the login for the portal is https://portal.example.com",
    "密码错误次数是3次",
]


@pytest.mark.parametrize("text, kind, secret", CREDENTIAL_SECRETS)
def test_a_credential_in_ordinary_words_is_redacted(text, kind, secret):
    result = redact(text)
    assert kind in result.kinds, result
    assert secret not in result.text


@pytest.mark.parametrize("text", CREDENTIAL_LOOK_ALIKES)
def test_a_sentence_that_only_mentions_a_credential_is_kept(text):
    result = redact(text)
    assert (result.text, result.kinds) == (text, ())


def test_credential_tables_are_large_enough_and_bilingual():
    def cjk(t):
        return any("\u4e00" <= c <= "\u9fff" for c in t)
    assert len(CREDENTIAL_SECRETS) >= 20 and len(CREDENTIAL_LOOK_ALIKES) >= 20
    assert sum(cjk(t) for t, _, _ in CREDENTIAL_SECRETS) >= 6
    assert sum(cjk(t) for t in CREDENTIAL_LOOK_ALIKES) >= 6
