"""Secrets and personal data are found (with the value's exact span) and ordinary notes are not."""
from __future__ import annotations

import time
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ekko_mem.policy.sensitive import describe, find_sensitive, redact

# Made-up credentials in the shapes real providers use.
OPENAI = "sk-proj-4fZq9TLw2xV7bN1cK8mR3pD6sH0jY5uA"
ANTHROPIC = "sk-ant-api03-Xy7Qw2Er9Tz4Ui1Op6As3Df8Gh5Jk0Lz"
GITHUB = "ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ"
GITHUB_FINE = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv"
AWS = "AKIAIOSFODNN7EXAMPLE"
SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
GOOGLE = "AIzaSyD3x4mPle-k3y_0123456789abcdefghij"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"
VALID_CN_ID = "11010519491231002X"  # the GB 11643 worked example
VISA = "4111111111111111"


def spans(text: str) -> list[tuple[str, str]]:
    return [(f["kind"], text[f["start"]:f["end"]]) for f in find_sensitive(text)]


@pytest.mark.parametrize(("text", "kind", "secret"), [
    (f"my key is {OPENAI}", "api_key", OPENAI),
    (f"ANTHROPIC_API_KEY={ANTHROPIC}", "api_key", ANTHROPIC),
    (f"token {GITHUB} for CI", "api_key", GITHUB),
    (f"用这个{GITHUB_FINE}推送", "api_key", GITHUB_FINE),
    (f"aws id {AWS}.", "api_key", AWS),
    (f"SLACK_BOT_TOKEN: {SLACK}", "api_key", SLACK),
    (f"maps key {GOOGLE}", "api_key", GOOGLE),
    (f"session {JWT}", "api_key", JWT),
    ("Authorization: Bearer 9f8e7d6c5b4a39281706aBcDeF", "api_key", "9f8e7d6c5b4a39281706aBcDeF"),
    ("api_key=a1b2c3d4e5f6a7b8c9d0", "api_key", "a1b2c3d4e5f6a7b8c9d0"),
    ('{"secret": "Zx81Qp03Lm57Rt29Vb46"}', "api_key", "Zx81Qp03Lm57Rt29Vb46"),
    ("X-Api-Key: 0f1e2d3c4b5a69788796a5b4", "api_key", "0f1e2d3c4b5a69788796a5b4"),
    ("token: 7d1c2a9e4b3f8e6d5c0b1a29", "api_key", "7d1c2a9e4b3f8e6d5c0b1a29"),
    ("接口密钥是q8W2e4R6t8Y0u2I4o6P8", "api_key", "q8W2e4R6t8Y0u2I4o6P8"),
    ("password: hunter2", "password", "hunter2"),
    ("passwd=correct-horse-9", "password", "correct-horse-9"),
    ("mysql -u root pwd=Tr0ub4dor", "password", "Tr0ub4dor"),
    ("DB_PASSWORD=s3cret!", "password", "s3cret!"),
    ('{"password": "p@ssw0rd"}', "password", "p@ssw0rd"),
    ("my password is hunter2", "password", "hunter2"),
    ("我的密码是abc12345，别告诉别人", "password", "abc12345"),
    ("wifi密码：Cafe2026", "password", "Cafe2026"),
    ("口令 = open-sesame", "password", "open-sesame"),
    (f"card {VISA} expires 08/27", "card_number", VISA),
    ("卡号 4111 1111 1111 1111 请记住", "card_number", "4111 1111 1111 1111"),
    ("mastercard 5555-5555-5555-4444", "card_number", "5555-5555-5555-4444"),
    ("amex 3782 822463 10005", "card_number", "3782 822463 10005"),
    ("unionpay 6222 0200 0000 0000 000", "card_number", "6222 0200 0000 0000 000"),
    (f"身份证号{VALID_CN_ID}", "national_id", VALID_CN_ID),
    ("id 440301199001010012 on file", "national_id", "440301199001010012"),
    ("SSN 123-45-6789", "national_id", "123-45-6789"),
    ("手机13812345678", "phone", "13812345678"),
    ("call 138 1234 5678", "phone", "138 1234 5678"),
    ("电话：+86 139-1234-5678。", "phone", "+86 139-1234-5678"),
    ("office +44 20 7946 0958", "phone", "+44 20 7946 0958"),
    ("ring +1 (415) 555-2671 today", "phone", "+1 (415) 555-2671"),
    ("email zhang.san@example.com.", "email", "zhang.san@example.com"),
    ("邮箱是li_si+memo@mail.example.cn谢谢", "email", "li_si+memo@mail.example.cn"),
    ("13812345678@163.com", "email", "13812345678@163.com"),
])
def test_finds_the_exact_value(text, kind, secret):
    assert spans(text) == [(kind, secret)]


@pytest.mark.parametrize("text", [
    "用户不吃香菜",
    "少油少辣，不要放味精",
    "以后做饭别给我推荐香菜 / no cilantro please",
    "we decided to use SQLite FTS5 with bm25 ranking",
    "Python 3.11.7 on 2026-03-01, then upgraded to 3.12.2",
    "released at 2026-03-01T12:00:00Z, rolled back at 2026-03-01T12:05:30.123+08:00",
    "commit 4f3a9c2e1b7d8f6a5c4b3a2918273645abcdef01 fixed it; short sha 1a2b3c4",
    "in 2026 we spent ¥12,345.67 and $1,234,567.89 on 3 servers",
    "epoch 1740830400, in ms 1740830400000",
    "order 20260301123456 shipped",
    "max_tokens=4096 and temperature=0.7",
    "the password is stored in the vault",
    "password: required",
    "密码是什么？忘记密码怎么办",
    "api_key: YOUR_API_KEY_HERE",
    "token=${GITHUB_TOKEN}",
    "PWD=/home/me/project OLDPWD=/tmp",
    "git clone git@github.com:owner/repo.git",
    "see icon@2x.png and logo@3x.svg",
    "use the scikit-learn-compatible API",
    "run +30m later, or +2h, or 3 days",
    "ISBN 978-3-16-148410-0",
    "4111111111111112 fails Luhn",  # one digit off a valid card
    "11010519491231002Y and 440301199001010013",  # bad check digits
])
def test_ordinary_text_yields_nothing(text):
    assert find_sensitive(text) == []


def test_card_must_pass_luhn_and_length():
    assert spans("5555555555554444") == [("card_number", "5555555555554444")]
    assert find_sensitive("5555555555554443") == []
    assert find_sensitive("4111 1111 1111") == []  # 12 digits
    assert find_sensitive("41111111111111111111") == []  # 20 digits


def test_card_beside_a_date_is_still_found():
    text = "2026-03-01 4111 1111 1111 1111"
    assert spans(text) == [("card_number", "4111 1111 1111 1111")]


def test_findings_are_ordered_and_do_not_overlap():
    text = f"邮箱 a@b.io，手机 13812345678，key {OPENAI}，password={ANTHROPIC}"
    found = find_sensitive(text)
    assert [f["kind"] for f in found] == ["email", "phone", "api_key", "api_key"]
    for before, after in pairwise(found):
        assert before["end"] <= after["start"]


def test_credential_that_is_also_a_key_is_reported_once_as_api_key():
    assert spans(f"password: {OPENAI}") == [("api_key", OPENAI)]


def test_redact_hides_every_value_and_keeps_the_sentence():
    text = f"密码是abc12345，key {OPENAI}，mail me: bob@example.org"
    out = redact(text)
    assert out == ("密码是[REDACTED:password]，key [REDACTED:api_key]，"
                   "mail me: [REDACTED:email]")


def test_redact_leaves_clean_text_alone():
    assert redact("少油少辣 less oil") == "少油少辣 less oil"


def test_redacted_text_is_not_flagged_again():
    out = redact("password=hunter22 token: 7d1c2a9e4b3f8e6d5c0b1a29")
    assert find_sensitive(out) == []


@pytest.mark.parametrize(("kinds", "phrase"), [
    ([], "nothing sensitive"),
    (["password"], "a password"),
    (["api_key", "email"], "an API key and an e-mail address"),
    (["phone", "api_key", "phone", "card_number"],
     "a phone number, an API key and a card number"),
    (["national_id"], "an ID number"),
])
def test_describe(kinds, phrase):
    assert describe([{"kind": k, "start": 0, "end": 1} for k in kinds]) == phrase


def test_describe_names_what_find_sensitive_found():
    assert describe(find_sensitive(f"{OPENAI} bob@example.org")) == (
        "an API key and an e-mail address")


@pytest.mark.parametrize("blob", [
    "a_" * 100_000,
    "1 " * 100_000,
    "x" * 200_000 + "@",
    "password" * 25_000,
    "sk-" + "a" * 200_000,
])
def test_long_input_scans_in_linear_time(blob):
    # A hang guard, not a speed check: a pattern that rescans from every position takes
    # minutes on these inputs, a linear one well under a second.
    start = time.perf_counter()
    find_sensitive(blob)
    assert time.perf_counter() - start < 30


SECRETS = st.sampled_from([OPENAI, GITHUB, AWS, JWT, VISA, VALID_CN_ID, "13812345678",
                           "bob@example.org", "password: hunter2", "密码是abc12345"])
FILLER = st.text(alphabet=st.sampled_from(list("香菜少油辣 abcXYZ019.,:-\n，。")), max_size=12)


@settings(max_examples=200)
@given(st.lists(st.tuples(FILLER, SECRETS), max_size=5), FILLER)
def test_properties_over_mixed_text(pieces, tail):
    text = "".join(f + " " + s + " " for f, s in pieces) + tail
    found = find_sensitive(text)
    for f in found:
        assert 0 <= f["start"] < f["end"] <= len(text)
    for before, after in pairwise(found):
        assert before["end"] <= after["start"]
    out = redact(text)
    for _, secret in pieces:
        core = secret.split()[-1].removeprefix("密码是")
        assert core not in out
    assert redact(out) == out


@pytest.mark.parametrize("text, kept", [
    ("my openai key is sk-abcdefghijklmnopqrstuvwxyz123456 ok", "my openai key is"),
    ("数据库密码是 hunter2x9，部署时用", "数据库密码是"),
    ("Authorization: Bearer abcdefghijklmnop1234567890", "Authorization:"),
    ("DB_PASSWORD=s3cr3t-Value", "DB_PASSWORD="),
])
def test_mask_secrets_replaces_credentials(text, kept):
    from ekko_mem.policy.sensitive import SECRET_MARKER, mask_secrets
    masked = mask_secrets(text)
    assert SECRET_MARKER in masked and masked.startswith(kept)


@pytest.mark.parametrize("text", [
    "the key point is a7f3c9e2b1d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8",  # a git sha
    "uuid 123e4567-e89b-12d3-a456-426614174000 and a token of thanks",
    "mail me at someone@example.com or call +86 138 0013 8000",  # personal, not a secret
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
    "what is the password policy?",
])
def test_mask_secrets_leaves_look_alikes_alone(text):
    from ekko_mem.policy.sensitive import mask_secrets
    assert mask_secrets(text) == text
