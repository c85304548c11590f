"""Secrets and personal data are found (with the value's exact span) and ordinary notes are not."""
from __future__ import annotations

from itertools import pairwise

import pytest
from conftest import deadline
from hypothesis import given, settings
from hypothesis import strategies as st

from ekko_mem.policy.sensitive import (
    SECRET_KINDS,
    SECRET_MARKER,
    describe,
    find_sensitive,
    mask_secrets,
    redact,
)

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
    with deadline(30, "scanning a long text"):
        find_sensitive(blob)


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


# -- credentials in the shapes people paste: keys, tokens, URLs, command lines, headers ------
PEM_BODY = ("MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
            "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
            "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo\n"
            "9z+40RQzuVaE8AkAFmxZzow3x+VJYKdjykkJ0iT9wCS0DRTXu269V264Vf/3jvre\n"
            "Ag==")


def pem(label: str, body: str = PEM_BODY) -> str:
    return f"-----BEGIN {label}PRIVATE KEY-----\n{body}\n-----END {label}PRIVATE KEY-----"


ENCRYPTED_LEGACY = pem("RSA ", "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0F1E2D3C4B5A6978"
                       "8796A5B4C3D2E1F0\n\n" + PEM_BODY)
OPENSSH_BODY = ("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
                "QyNTUxOQAAACBmYWtlZmFrZWZha2VmYWtlZmFrZWZha2VmYWtlZmFrZWZha2UAAAAJ\n"
                "ZmFrZWtleTE")  # a short last line, without padding
TRUNCATED_START = "-----BEGIN PRIVATE KEY-----\n" + PEM_BODY.removesuffix("\nAg==")

POSITIVES = [
    # private keys, the whole block
    (f"here is the key:\n{pem('RSA ')}\nthanks", pem("RSA "), "api_key"),
    (pem("EC "), pem("EC "), "api_key"),
    (pem("DSA "), pem("DSA "), "api_key"),
    (pem(""), pem(""), "api_key"),
    (pem("ENCRYPTED "), pem("ENCRYPTED "), "api_key"),
    (ENCRYPTED_LEGACY, ENCRYPTED_LEGACY, "api_key"),
    (pem("OPENSSH ", OPENSSH_BODY), pem("OPENSSH ", OPENSSH_BODY), "api_key"),
    ('{"private_key": "' + pem("").replace("\n", "\\n") + '\\n"}',
     pem("").replace("\n", "\\n"), "api_key"),
    (TRUNCATED_START + "\n\nwhy does ssh say invalid format?", TRUNCATED_START, "api_key"),
    # provider tokens
    ("OPENAI_API_KEY sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_Q7aB0cD",
     "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_Q7aB0cD", "api_key"),
    ("use sk-svcacct-Zy9xWv8uTs7rQp6oNm5lKj4iHg3fEd2cBa1 here",
     "sk-svcacct-Zy9xWv8uTs7rQp6oNm5lKj4iHg3fEd2cBa1", "api_key"),
    ("old key sk-Fa4eK3yF0rTe5tsOnly9AbCdEfGhIjKlMnOpQrStUvWxYz12",
     "sk-Fa4eK3yF0rTe5tsOnly9AbCdEfGhIjKlMnOpQrStUvWxYz12", "api_key"),
    ("claude: sk-ant-api03-FaKe_k3y-F0r-T3sts0nlyAbCdEfGhIjKlMnOpQrStUvWxYz-AA",
     "sk-ant-api03-FaKe_k3y-F0r-T3sts0nlyAbCdEfGhIjKlMnOpQrStUvWxYz-AA", "api_key"),
    ("stripe sk_live_51FaKeK3yF0rT3st5AbCdEfGh", "sk_live_51FaKeK3yF0rT3st5AbCdEfGh", "api_key"),
    ("rk_live_51FaKeRestr1ctedAbCdEf9", "rk_live_51FaKeRestr1ctedAbCdEf9", "api_key"),
    ("STRIPE_KEY sk_test_4eC39HqLyjWDarjtT1zdp7dc", "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "api_key"),
    ("rk_test_26PHem9AhJZvU623DfE1x4sd", "rk_test_26PHem9AhJZvU623DfE1x4sd", "api_key"),
    ("webhook whsec_FaKeW3bh00kS1gn1ngS3cr3tAbCd", "whsec_FaKeW3bh00kS1gn1ngS3cr3tAbCd", "api_key"),
    ("gho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a",
     "api_key"),
    ("ghu_FaKeUs3rT0k3nF0rT3st5AbCdEfGhIjKlMn", "ghu_FaKeUs3rT0k3nF0rT3st5AbCdEfGhIjKlMn",
     "api_key"),
    ("ghs_FaKeS3rv3rT0k3nF0rT3st5AbCdEfGhIjKl", "ghs_FaKeS3rv3rT0k3nF0rT3st5AbCdEfGhIjKl",
     "api_key"),
    ("ghr_FaKeR3fr3shT0k3nF0rT3st5AbCdEfGhIjK", "ghr_FaKeR3fr3shT0k3nF0rT3st5AbCdEfGhIjK",
     "api_key"),
    ("gitlab glpat-FaKe1234567890AbCdEf", "glpat-FaKe1234567890AbCdEf", "api_key"),
    ("deploy token gldt-FaKeD3pl0yT0k3nAbCdEf", "gldt-FaKeD3pl0yT0k3nAbCdEf", "api_key"),
    ("runner glrt-FaKeRunn3rT0k3nAbCdEfGh", "glrt-FaKeRunn3rT0k3nAbCdEfGh", "api_key"),
    ("//registry.npmjs.org/:_authToken=npm_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78",
     "npm_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78", "api_key"),
    ("huggingface-cli login hf_FakeTokenForTests0nlyAbCdEfGhIjKlMn",
     "hf_FakeTokenForTests0nlyAbCdEfGhIjKlMn", "api_key"),
    ("temporary ASIAFAKE1TESTONLY456 creds", "ASIAFAKE1TESTONLY456", "api_key"),
    ("aws_secret_access_key = wJalrXUtnFEMIKxMDENG/bPxRfiCYFAKEKEYabcd",
     "wJalrXUtnFEMIKxMDENG/bPxRfiCYFAKEKEYabcd", "api_key"),
    ('{"AccessKeyId": "ASIAFAKE1TESTONLY456", "SecretAccessKey": '
     '"QmFkZ1N0dWZmL0ZvclRlc3RzK09ubHlOb3RSZWFs"}',
     "QmFkZ1N0dWZmL0ZvclRlc3RzK09ubHlOb3RSZWFs", "api_key"),
    ("xoxp-1234567890-0987654321-FaKeUs3rT0k3n", "xoxp-1234567890-0987654321-FaKeUs3rT0k3n",
     "api_key"),
    ("socket mode xapp-1-A0FAKE12345-1234567890123-f4k3f4k3f4k3",
     "xapp-1-A0FAKE12345-1234567890123-f4k3f4k3f4k3", "api_key"),
    ("post to https://hooks.slack.com/services/T0FAKE000/B0FAKE000/FaKeW3bh00kS3cr3tXyZ",
     "https://hooks.slack.com/services/T0FAKE000/B0FAKE000/FaKeW3bh00kS3cr3tXyZ", "api_key"),
    ("https://discord.com/api/webhooks/123456789012345678/FaKe-W3bh00k_T0k3nAbCdEfGh",
     "https://discord.com/api/webhooks/123456789012345678/FaKe-W3bh00k_T0k3nAbCdEfGh",
     "api_key"),
    ("GOOGLE_MAPS AIzaSyFAKE0key1for2tests3only4abcdeXYZ9",
     "AIzaSyFAKE0key1for2tests3only4abcdeXYZ9", "api_key"),
    ("gcloud token ya29.a0AfFaKeAcc3ssT0k3n_F0rT3st5-AbCdEf",
     "ya29.a0AfFaKeAcc3ssT0k3n_F0rT3st5-AbCdEf", "api_key"),
    ("cookie eyJhbGciOiJSUzI1NiJ9.eyJ1c2VyIjoiZmFrZSJ9.c2lnbmF0dXJlLWZha2U",
     "eyJhbGciOiJSUzI1NiJ9.eyJ1c2VyIjoiZmFrZSJ9.c2lnbmF0dXJlLWZha2U", "api_key"),
    # passwords inside URLs
    ("DATABASE_URL=postgres://app:Pg5ecret9@db.example.com:5432/app", "Pg5ecret9", "password"),
    ("mysql://root:My$ql-Fake1@127.0.0.1/shop", "My$ql-Fake1", "password"),
    ("mongodb+srv://admin:M0ngoFake!@cluster0.example.mongodb.net/test", "M0ngoFake!",
     "password"),
    ("REDIS_URL=redis://:R3disFake@cache.example.com:6379/0", "R3disFake", "password"),
    ("amqp://guest:Rabb1tFake@mq.internal:5672/", "Rabb1tFake", "password"),
    ("git remote add origin https://bob:Gh-Fake-pw7@git.example.com/team/repo.git",
     "Gh-Fake-pw7", "password"),
    ("ftp://upload:Ftp@Fake9@files.example.com/in", "Ftp@Fake9", "password"),
    # passwords on a command line
    ("mysql -pS3cretFake", "S3cretFake", "password"),
    ("mysql -u root -pS3cretFake shop", "S3cretFake", "password"),
    ("mysqldump -h db -u backup -pDumpFake9 --all-databases > all.sql", "DumpFake9", "password"),
    ("mariadb -u app -p'Mar1aFake'", "Mar1aFake", "password"),
    ("mysql --user=app --password=Fl4gFake shop", "Fl4gFake", "password"),
    ("psql --password S3cretFake2", "S3cretFake2", "password"),
    ("tool --passwd=Passwd-Fake1", "Passwd-Fake1", "password"),
    ("sshpass -p Ssh-Fake-42 ssh deploy@host", "Ssh-Fake-42", "password"),
    ("PGPASSWORD=PgFake77 psql -h db -U app", "PgFake77", "password"),
    ("redis-cli -h cache -p 6379 -a R3disCliFake ping", "R3disCliFake", "password"),
    ("curl -u admin:CurlFake9 https://api.example.com/v1", "CurlFake9", "password"),
    ("openssl pkcs12 -in cert.p12 -passin pass:P12Fake00", "P12Fake00", "password"),
    # Authorization headers
    ("curl -H 'Authorization: Basic dXNlcjpwYXNz' https://x.example.com", "dXNlcjpwYXNz",
     "api_key"),
    ("Authorization: Bearer FaKeB3ar3rT0k3nAbCdEfGh", "FaKeB3ar3rT0k3nAbCdEfGh", "api_key"),
    ("Authorization: token ghp_FaKeG1tHubT0k3nF0rT3st5AbCdEfGhIjK",
     "ghp_FaKeG1tHubT0k3nF0rT3st5AbCdEfGhIjK", "api_key"),
    ("Proxy-Authorization: Basic cHJveHk6RmFrZTk5", "cHJveHk6RmFrZTk5", "api_key"),
    ("X-Api-Key: FaKeAp1K3yAbCdEf0123", "FaKeAp1K3yAbCdEf0123", "api_key"),
    # password words followed by a value, with or without a separator
    ("password: hunter2x9", "hunter2x9", "password"),
    ("password hunter2x9", "hunter2x9", "password"),
    ("my password is hunter2x9", "hunter2x9", "password"),
    ("the admin password is: hunter2x9", "hunter2x9", "password"),
    ("passphrase correct-horse-battery-7", "correct-horse-battery-7", "password"),
    ("pwd Tr0ub4dor&3", "Tr0ub4dor&3", "password"),
    ("密码是 abc123456", "abc123456", "password"),
    ("密码 abc123456", "abc123456", "password"),
    ("邮箱的密碼 Qwe!2345 别忘了", "Qwe!2345", "password"),
    ("口令：Abc!2345", "Abc!2345", "password"),
    ("wifi密码：88886666", "88886666", "password"),
    ("路由器密码12345678", "12345678", "password"),
]


@pytest.mark.parametrize(("text", "secret", "kind"), POSITIVES)
def test_credential_is_found_inside_one_span(text, secret, kind):
    at = text.index(secret)
    assert any(f["kind"] == kind and f["start"] <= at and at + len(secret) <= f["end"]
               for f in find_sensitive(text)), spans(text)


@pytest.mark.parametrize(("text", "secret", "kind"), POSITIVES)
def test_mask_secrets_removes_every_credential(text, secret, kind):
    masked = mask_secrets(text)
    assert secret not in masked and SECRET_MARKER in masked
    assert mask_secrets(masked) == masked  # the marker itself is not a password


@pytest.mark.parametrize(("text", "secret", "kind"), POSITIVES)
def test_redacted_credentials_stay_redacted(text, secret, kind):
    assert not [f for f in find_sensitive(redact(text)) if f["kind"] in SECRET_KINDS]


def test_pem_block_is_one_span():
    text = f"before\n{pem('RSA ')}\nafter"
    assert spans(text) == [("api_key", pem("RSA "))]


def test_truncated_pem_stops_at_the_end_of_its_base64():
    text = TRUNCATED_START + "\n\nwhy does ssh say invalid format?"
    assert spans(text) == [("api_key", TRUNCATED_START)]


def test_url_keeps_scheme_and_host():
    assert redact("postgres://app:Pg5ecret9@db.example.com/app") == (
        "postgres://[REDACTED:password]@db.example.com/app")


NEGATIVES = [
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "commit 4f3a9c2e1b7d8f6a5c4b3a2918273645abcdef01",
    "short shas 1a2b3c4 and 4f3a9c2e1b7d",
    "image sha256:9b2c7e4f1a3d5b6c8e0f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c2d4e6f8a0b2c4d",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==" * 4,
    "blob U29tZSBvcmRpbmFyeSBsb25nIGJhc2U2NCB0ZXh0IHdpdGhvdXQgYW55IGtleXdvcmQgYXQgYWxs"
    "IGp1c3QgZGF0YSBmb3IgYSB0ZXN0IGNhc2U=",
    "Python 3.12.2, node v20.11.1, version 1.4.0-rc.2+build.77",
    "released 2026-03-01T12:00:00Z, next sprint 2026/03/15",
    "edit /usr/local/lib/python3.12/site-packages/ekko_mem/policy/sensitive.py",
    r"C:\Users\me\AppData\Local\ekko\config.toml",
    "publishable pk_live_51FaKePubl1shableAbCdEf and pk_test_51FaKePubl1shableAbCd",
    "pip install scikit-learn; import sklearn as sk-learn",
    "see task-1234 and ask-5678901234567890abcdef",
    "max_tokens=512, the token count is 1200",
    "the tokenizer splits tokens",
    "the password is stored in the vault",
    "请帮我重置密码",
    "忘记密码了怎么办",
    "密码 错误",
    "密码是什么？",
    "password reset flow",
    "password manager",
    "passwd --stdin alice",
    "epoch 1740830400123",
    "colours #ff8800 and #1a2b3c",
    "npm_config_cache=/tmp/npm",
    "from huggingface_hub import hf_hub_download",
    "mkdir -p build && git push -f",
    "python -m pytest -p no:cacheprovider",
    "ssh -p 2222 deploy@host.example.com",
    "mysql -u root -p shop",
    "mysql -h db -P 3306 -u app -p",
    "pg_dump --password-file ~/.pw",
    "mysql --password=$DB_PASSWORD",
    'mysql --password "${PW}"',
    "mysql --password <your-password>",
    "curl -u admin https://api.example.com",
    "git clone git@github.com:owner/repo.git",
    "open https://user@host.example.com/path",
    "http://localhost:8080/health and https://example.com:443/a?b=c@d",
    "postgres://user:password@localhost/db and redis://:${REDIS_PW}@cache",
    "Authorization: Bearer <token>",
    "Authorization: Bearer YOUR_ACCESS_TOKEN",
    "Authorization:\nContent-Type: application/json",
    "-----BEGIN PRIVATE KEY----- marks the start of a key file",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEfakePublicKeyAbCdEfGh\n"
    "-----END PUBLIC KEY-----",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_look_alikes_are_not_credentials(text):
    assert not [f for f in find_sensitive(text) if f["kind"] in SECRET_KINDS], spans(text)
    assert mask_secrets(text) == text


@pytest.mark.parametrize("blob", [
    "QUJD" * 50_000,
    "1234567890" * 20_000,
    "-" * 200_000,
    "-----BEGIN PRIVATE KEY-----\n" + "A" * 200_000,
    "-----BEGIN PRIVATE KEY-----\n" + "AAAAAAAAAA\n" * 20_000,
    "-----BEGIN RSA PRIVATE KEY-----" * 7_000,
    "-----BEGIN " + "A" * 200_000,
    "a://b:" + ":" * 200_000,
    "x://" * 50_000,
    "x://u:" + "p@" * 100_000,
    "mysql -u " * 25_000,
    "redis-cli " * 20_000,
    "curl -u a" * 25_000,
    "sshpass -x " * 20_000,
    "password " * 25_000,
    "密码 " * 70_000,
    "authorization: " * 15_000,
    "Authorization: Basic " + "A" * 200_000,
    "--password=" * 20_000,
    "sk-" * 70_000,
    "glpat-" + "a." * 100_000,
    "@" * 200_000,
])
def test_adversarial_input_returns(blob):
    assert isinstance(find_sensitive(blob), list)
    assert isinstance(mask_secrets(blob), str)
