"""The cheap tests that let the secret scan skip a pattern never change what it finds: with every
pattern tried behind nothing but its trigger word, the findings are the same, on inputs at the
edge of each test (other scripts' digits, odd case forms, near-miss numbers) and on mixtures."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
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


def test_case_blind_letters_lower_as_the_scan_assumes():
    # A case-blind pattern takes these characters, and no others beyond ASCII, for an ASCII
    # letter; all but the Kelvin sign lower-case to something else, so the scan does not rely
    # on the lower-cased text when one of them is there. None of them is a digit.
    everything = "".join(map(chr, range(0x110000)))
    taken = set(re.findall("(?i)[a-z]", everything)) - set("abcdefghijklmnopqrstuvwxyz"
                                                            "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    assert taken == {*sensitive_patterns._CASE_ODD, "\u212a"}
    assert "\u212a".lower() == "k" and not any(c.isdigit() for c in taken)
    # Digits, marks and separators have no other case forms, and lower() leaves them be.
    assert set(re.findall(r"(?i)[0-9:=：是为為@/+_\-\"']", everything)) == set(
        "0123456789:=：是为為@/+_-\"'")
    assert all(c.lower() == c for c in re.findall(r"\s", everything))
    assert [c for c in map(chr, range(0x110000)) if len(c.lower()) != 1] == ["İ"]


def test_every_pattern_has_its_needs_and_groups_start_with_characters():
    needs, sources = sensitive_patterns._NEEDS, sensitive_patterns._SOURCES
    assert len(needs) == len(sources) == len(sensitive_patterns._TRIGGERS)
    for chosen in (None, SECRET_KINDS, *((kind,) for kind in KINDS)):
        for ascii_text in (True, False):
            _, _, groups, _ = sensitive_patterns._plan(chosen, ascii_text)
            assert all(len(char) == 1 for first, _, _ in groups for char in first)
            tried = {index for _, _, members in groups for index, _, _ in members}
            wanted = {i for i, (kind, _, _) in enumerate(sources)
                      if chosen is None or kind in chosen}
            left_out = [sources[i][2] for i in wanted - tried]
            # An ASCII text leaves out only the patterns that start with a Chinese word.
            assert all(source.startswith(("(?:密钥", "(?:密码")) for source in left_out)
            assert ascii_text or not left_out


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
