"""The cheap tests that let the secret scan skip a pattern never change what it finds: with every
pattern tried behind nothing but its trigger word, the findings are the same, on inputs at the
edge of each test (other scripts' digits, odd case forms, separators, near-miss numbers) and on
mixtures."""
from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ekko_mem.policy import sensitive, sensitive_patterns
from ekko_mem.policy.sensitive import (
    KINDS,
    SECRET_KINDS,
    credentials_in_json,
    find_sensitive,
    mask_secrets,
)


def every_pattern(text: str, kinds=None) -> list[dict]:
    """find_sensitive with no needs in the way: each pattern whose trigger the lower-cased text
    holds is run, and its matches are checked and merged as find_sensitive does."""
    lowered = text.lower()
    found = []
    for (kind, check, source), triggers in zip(sensitive_patterns._SOURCES,
                                               sensitive_patterns._TRIGGERS):
        if kinds is not None and kind not in kinds:
            continue
        if triggers and not any(t in lowered for t in triggers):
            continue
        pattern = re.compile(source)
        group = "v" if "v" in pattern.groupindex else 0
        for match in pattern.finditer(text):
            if check == "card":
                found += [(start, end, kind) for start, end in sensitive._card_spans(match)]
                continue
            span = sensitive._accept(check, match.group(group), match.start(group))
            if span:
                found.append((*span, kind))
    found.sort(key=lambda f: (f[0], f[0] - f[1], sensitive._RANK[f[2]]))
    merged: list[dict] = []
    for start, end, kind in found:
        if not merged or start >= merged[-1]["end"]:
            merged.append({"kind": kind, "start": start, "end": end})
    return merged


def kinds_found(text: str, kinds=None) -> list[str]:
    return [f["kind"] for f in find_sensitive(text, kinds)]


FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")

# Each with what it holds: every case is also compared with every_pattern below.
EDGES = [
    # \d takes other scripts' digits: an SSN, a card, an id or a phone written in them
    ("SSN 123-45-6789".translate(FULLWIDTH), ["national_id"]),
    ("SSN 345-67-8901".translate(ARABIC_INDIC), ["national_id"]),
    ("card 4" + "111 1111 1111 1111".translate(FULLWIDTH), ["card_number"]),
    ("card " + "4111 1111 1111 1111".translate(FULLWIDTH), []),  # a card starts with 2-6
    ("id 110105194912310" + "02".translate(FULLWIDTH) + "X", ["national_id"]),
    ("id 110105" + "19".translate(FULLWIDTH) + "491231002X", []),  # 19 or 20, written so
    ("call 13" + "812345678".translate(FULLWIDTH), ["phone"]),
    ("call +" + "86 138 1234 5678".translate(FULLWIDTH), ["phone"]),
    ("call +" + "971 50 123 4567".translate(ARABIC_INDIC), ["phone"]),
    # the length a number needs: 13 card digits, 11 for a mobile, groups of one separator
    ("visa 4222222222222 done", ["card_number"]),
    ("visa 422222222222 done", []),
    ("visa 4222 2222 2222 2", ["card_number"]),
    ("visa 4222  2222 2222 2", []),
    ("visa 4222-2222-2222-2222-22 ok", []),
    ("mobile 138-1234-5678", ["phone"]),
    ("mobile 138-1234-567", []),
    ("2024-05-12 10:30 会议 3000 元 12 人", []),
    ("订单 2024-05-12-0001 发票 05-12-2024", []),
    ("SSN 123-45-678 and 123-456-7890", []),
    # case forms a case-blind pattern matches: the Kelvin sign, long s, dotted and dotless i
    ("to\u212aen: a1b2e3d4e5f6a7b8a9d0", ["api_key"]),
    ("token list; ſecret: k3y0a1b2c3d4e5f6g7h8", ["api_key"]),
    ("PASSWORD İS hunter2x9", ["password"]),
    ("PASSWORD ıS hunter2x9", ["password"]),
    ("paſſword: hunter2x9", []),  # no trigger word in the lower-cased text
    ("AUTHORIZATION: Bearer 9f8e7d6c5b4a39281706aBcDeF", ["api_key"]),
    ("REDISCLI_AUTH=s3cretPW", ["password"]),
    ("PGPASSWORD=hunter2", ["password"]),
    ("SECRET=Zx81Qp03Lm57Rt29Vb46", ["api_key"]),
    ("API_KEY=a1b2c3d4e5f6a7b8c9d0", ["api_key"]),
    # the separators of a named value, Chinese ones included
    ("token：a1b2c3d4e5f6a7b8c9d0", ["api_key"]),
    ("token是a1b2c3d4e5f6a7b8c9d0", ["api_key"]),
    ("令牌为abc123def456ghi789", ["api_key"]),
    ("密钥：q8W2e4R6t8Y0u2I4o6P8", ["api_key"]),
    ("口令 = open-sesame", ["password"]),
    ("SSN 123-45-6789 and call 138 1234 567", ["national_id"]),
    ("SSN 123-45-678, id 2024", []),  # no nine digits together: no number pattern is run
    ("card 4111-1111--1111-1111 x", []),
    ("card 4111 1111 1111 1111", ["card_number"]),
    ("パスワードは hunter2x9", ["password"]),
    ("token a1b2c3d4e5f6a7b8c9d0", []),  # a named value needs its separator
    ("DB_PASS hunter2x9", []),
    ("密码abc123456", ["password"]),
    ("the token budget: 500 tokens", []),
    ("key points: 1) 2) 3)", []),
    # a password with no separator needs whitespace after the word
    ("password\u3000hunter2x9", ["password"]),
    ("passwordhunter2x9", []),
    # 20 letters make an AWS key id; shorter words are never looked at
    ("AKIAABCDEFGHIJKLMNOP", ["api_key"]),
    ("AKIAABCDEFGHIJKLMNO", []),
    ("user", []),
    ("", []),
]


@pytest.mark.parametrize(("text", "kinds"), EDGES)
def test_edges_are_found_as_by_every_pattern(text, kinds):
    assert kinds_found(text) == kinds
    for chosen in (None, SECRET_KINDS, *((kind,) for kind in KINDS)):
        assert find_sensitive(text, chosen) == every_pattern(text, chosen), chosen


def test_separators_have_no_other_case_forms():
    # Even case-blind, a pattern matches no other character in a separator's place.
    everything = "".join(map(chr, range(0x110000)))
    separators = sensitive_patterns._SEPARATORS
    assert set(re.findall(f"(?i)[{separators}]", everything)) == set(separators)


SEPARATED = [(index, source) for index, (_, _, source) in enumerate(sensitive_patterns._SOURCES)
             if sensitive_patterns._ALSO_SEPARATOR[index]]
DIGITS_ONLY = [index for index, words in enumerate(sensitive_patterns._TRIGGERS) if not words]


@pytest.mark.parametrize(("index", "source"), SEPARATED, ids=[str(i) for i, _ in SEPARATED])
def test_a_pattern_skipped_without_a_separator_matches_nothing_without_one(index, source):
    @settings(max_examples=60, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.from_regex(re.compile(source)))
    def check(text):
        assert any(char in text for char in sensitive_patterns._SEPARATORS), text
    check()


def findings_of(index: int, text: str) -> list[str]:
    """What one pattern reports in `text`, checks passed."""
    kind, check, source = sensitive_patterns._SOURCES[index]
    pattern = re.compile(source)
    group = "v" if "v" in pattern.groupindex else 0
    spans = []
    for match in pattern.finditer(text):
        if check == "card":
            spans += sensitive._card_spans(match)
        else:
            spans += [span for span in [sensitive._accept(check, match.group(group),
                                                          match.start(group))] if span]
    return [text[start:end] for start, end in spans]


@pytest.mark.parametrize("index", DIGITS_ONLY)
def test_a_pattern_skipped_without_a_number_finds_nothing_without_one(index):
    source = sensitive_patterns._SOURCES[index][2]
    # Generated matches, and numbers of every length in the forms people write them.
    numbers = ["".join(str((i * 7 + 3) % 10) for i in range(n)) for n in range(1, 20)]
    written = [f"{n[:3]}-{n[3:5]}-{n[5:]}" for n in numbers] + [
        " ".join(n[i:i + 4] for i in range(0, len(n), 4)) for n in numbers]
    texts = numbers + written + ["4111111111111111", "4111 1111 1111 1111", "123-45-6789",
                                 "13812345678", "11010519491231002X", "+86 138 1234 5678"]

    @settings(max_examples=60, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.from_regex(re.compile(source)))
    def check(text):
        for found in findings_of(index, text):
            assert re.search(sensitive_patterns._NUMBER, found), found
    check()
    for text in texts:
        for found in findings_of(index, text):
            assert re.search(sensitive_patterns._NUMBER, found), found
    assert any(findings_of(index, text) for text in texts)  # the forms are ones it finds


@pytest.mark.parametrize("text", [
    "the token budget is 800 tokens", "all tests passed", "a key point of the api",
    "port 5433, released 2024-05-12 at 10:30", "会议改到 2024-05-12，3000 元", "密钥轮换",
])
def test_everyday_words_and_short_numbers_run_no_pattern(text):
    assert sensitive_patterns.patterns(text, None) == []


def test_every_pattern_has_its_trigger_words_or_needs_a_digit():
    sources, triggers = sensitive_patterns._SOURCES, sensitive_patterns._TRIGGERS
    assert len(sources) == len(triggers) == len(sensitive_patterns._ALSO_SEPARATOR)
    assert all(words or "\\d" in source for (_, _, source), words in zip(sources, triggers))
    assert all(word == word.lower() for words in triggers for word in words)


FRAGMENTS = [
    "会议", "明天", "memory tool", "token", "tokens：", "key", "secret", "password", "PASSWORD",
    "pwd", "密码", "密钥", "令牌", "口令", "是", "为", "：", ":", "=", " ", "  ", "-", "_", "@",
    "+", ".", "/", "://", "https://", "user:", "bob@example.com", "sk-", "AKIA", "AIza", "eyJ",
    ".eyJ", "ghp_", "glpat-", "hf_", "npm_", "xoxb-", "whsec_", "sk_live_", "-----BEGIN ",
    "PRIVATE KEY-----", "mysql -u root -p", "curl -u a:", "sshpass -p", "redis-cli -a",
    "-pass pass:", "--password=", "PGPASSWORD=", "Bearer ", "Authorization: ", "is ",
    "4111", "1111", "13", "138", "1234", "5678", "86", "110105", "1949", "1231", "002X", "19",
    "20", "2024-05-12", "123-45-6789", "a1b2c3d4e5f6a7b8c9d0", "Zx81Qp03Lm57Rt29Vb46", "hunter2x9",
    "０１２３", "４１１１", "٣٤٥", "\u212a", "ſ", "İ", "ı", "\u3000", "\n", "IOSFODNN7EXAMPLE",
    "pass", "PW", "api_key", "は", "パスワード", "口令", "\"", "'",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=14))
def test_mixtures_are_found_as_by_every_pattern(pieces):
    text = "".join(pieces)
    for chosen in (None, SECRET_KINDS):
        assert find_sensitive(text, chosen) == every_pattern(text, chosen)


def test_short_fields_and_named_fields_in_json():
    # A record's short fields are skipped without a scan; a named field is still judged
    # with its name, and the cache of names does not mix two names up.
    record = {"role": "user", "sessionId": "default", "password": "hunter2x9",
              "db_password": "hunter2x9", "note": "hunter2x9"}
    assert [f["kind"] for f in credentials_in_json(record)] == ["password", "password"]
    assert credentials_in_json({"role": "user", "sessionId": "default"}) == []
    assert mask_secrets("default") == "default"


@pytest.mark.parametrize("order", [("note", "password", "token"), ("password", "note", "token"),
                                   ("token", "password", "note")])
def test_a_string_judged_once_is_still_judged_with_its_field_name(order):
    """mask_json remembers short strings it has judged: the same text under a credential's
    name and under an ordinary one keeps two answers, whichever came first."""
    from ekko_mem.policy.sensitive import SECRET_MARKER, mask_json
    value = "hunter2x9"
    masked = mask_json({name: value for name in order})
    assert masked == {"note": value, "password": SECRET_MARKER, "token": value}
    assert mask_json([value, {"password": value}]) == [value, {"password": SECRET_MARKER}]
    key = "sk-abcdefghijklmnopqrstuvwxyz123456"
    assert mask_json({"note": key, "x": [key]}) == {"note": SECRET_MARKER, "x": [SECRET_MARKER]}
