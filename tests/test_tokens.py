"""tokens.py: the words FTS5 stores and searches, for Chinese, mixed and other scripts."""
from __future__ import annotations

import pytest

from ekko_mem import tokens
from ekko_mem.tokens import index_text, runs

# 25 letters and digits: long enough for the path that cuts bigrams from one string.
LONG = "我们用SQLite的FTS5做全文检索，用户不吃香菜"


def test_a_word_inside_a_chinese_sentence_is_found_by_its_bigram():
    assert "香菜" in tokens.tokens("用户不吃香菜")
    assert "香菜" in tokens.tokens(LONG)
    assert "香菜" in tokens.tokens("备注：" + "用户不吃香菜，" * 10)


def test_a_short_and_a_long_text_give_a_run_the_same_tokens():
    assert index_text("用户不吃香菜") == "用户 户不 不吃 吃香 香菜 用 户 不 吃 香 菜"
    assert index_text(LONG) == ("我们 们用 我 们 用 sqlit 的 fts5 做全 全文 文检 检索 做 全 文 检 索 "
                                "用户 户不 不吃 吃香 香菜 用 户 不 吃 香 菜")


def test_mixed_text_splits_where_chinese_meets_latin():
    assert runs("用Python写脚本") == ["用", "python", "写脚本"]
    assert runs(LONG) == ["我们用", "sqlite", "的", "fts5", "做全文检索", "用户不吃香菜"]
    assert runs("版本v2发布") == ["版本", "v2", "发布"]


def test_the_token_list_is_the_stream_in_order():
    assert tokens.tokens(LONG)[:8] == ["我们", "们用", "我", "们", "用", "sqlit", "的", "fts5"]
    assert tokens.tokens("香菜好，Café!") == ["香菜", "菜好", "香", "菜", "好", "café"]


def test_fullwidth_letters_and_digits_are_lower_cased_latin_runs():
    assert runs("ＡＢＣ公司的１２３号") == ["ａｂｃ", "公司的", "１２３", "号"]
    assert runs("香菜，芹菜！（葱）") == ["香菜", "芹菜", "葱"]


def test_kana_and_hangul_are_cjk_runs():
    assert runs("ひらがなとカタカナと漢字") == ["ひらがなとカタカナと漢字"]
    assert runs("コーヒーが好き") == ["コーヒーが好き"]
    assert runs("カタ・カナ") == ["カタ", "カナ"]  # the middle dot is punctuation
    assert runs("한국어를 공부해요") == ["한국어를", "공부해요"]
    assert runs("韓國어") == ["韓國어"]
    assert index_text("한국어") == "한국 국어 한 국 어"


@pytest.mark.parametrize("ch, cjk", [
    ("\u3041", True), ("\u30ff", True),  # first and last kana letters
    ("\u3005", False), ("\u3007", False),  # 々 and 〇, just below the kana
    ("\u3105", False),  # bopomofo, just above
    ("\u3400", True), ("\u4e00", True), ("\u9fa5", True),  # extension A, unified
    ("\ua000", False),  # Yi, after the unified ideographs
    ("\uac00", True), ("\ud7a3", True), ("\ud7b0", False),  # hangul syllables, then jamo
    ("\uf900", True), ("\ufb1d", False),  # compatibility ideographs, then Hebrew
    ("\U00020000", False),  # extension B is beyond the BMP ranges
])
def test_the_cjk_ranges_decide_where_a_run_ends(ch, cjk):
    if cjk:
        assert runs("ab" + ch + "中") == ["ab", ch + "中"]
    else:
        assert runs("ab" + ch + "中") == ["ab" + ch, "中"]


def test_english_is_stemmed_inside_chinese_text():
    assert index_text("喜欢movies") == "喜欢 喜 欢 movi"
    assert index_text("喜欢movie") == "喜欢 喜 欢 movi"
    assert index_text("I watched two movies and liked painting") == (
        "i watch two movi and lik paint")
    long = "我最近看了很多movies，也喜欢painting和running，周末常去公园"
    assert {"movi", "paint", "run"} <= set(tokens.tokens(long))


def test_non_ascii_letters_are_lower_cased():
    assert runs("CAFÉ und Straße") == ["café", "und", "straße"]
    assert runs("ΣΊΣΥΦΟΣ") == ["σίσυφος"]  # with its final sigma
    assert runs("ÉCOLE学校") == ["école", "学校"]
    assert runs("用户喜欢CAFÉ和Crème Brûlée") == ["用户喜欢", "café", "和", "crème", "brûlée"]


def test_a_word_mixing_cjk_with_other_letters_is_split_between_them():
    assert runs("café很好") == ["café", "很好"]
    assert runs("ａｂｃ公司ｄ") == ["ａｂｃ", "公司", "ｄ"]
    assert runs("时时々刻刻") == ["时时", "々", "刻刻"]
    assert runs("café カタカナabc 한국ｘ") == ["café", "カタカナ", "abc", "한국", "ｘ"]


def test_lower_casing_that_changes_length_and_combining_marks():
    assert runs("İ") == ["i"]  # lower() leaves i and a combining dot, which separates
    assert runs("e\u0301cole") == ["e", "cole"]
    assert runs("İstanbul很美") == ["i", "stanbul", "很美"]


@pytest.mark.parametrize("text", ["", " ", "\t\n  ", "\u3000\u3000", "\xa0\u2009"])
def test_empty_and_blank_text_has_no_tokens(text):
    assert runs(text) == []
    assert tokens.tokens(text) == []
    assert index_text(text) == ""


@pytest.mark.parametrize("text", ["？！。，、", "...!!!", "---___", "🙂🙂", "《》【】“”", "〿"])
def test_punctuation_only_has_no_tokens(text):
    assert runs(text) == []
    assert index_text(text) == ""


def test_underscores_and_emoji_separate_runs():
    assert runs("snake_case") == ["snake", "case"]
    assert runs("用户_香菜🙂芹菜") == ["用户", "香菜", "芹菜"]


def test_index_text_follows_a_swapped_cjk_tokens(monkeypatch):
    # a caller may swap cjk_tokens to measure what single characters add
    monkeypatch.setattr(tokens, "cjk_tokens", lambda run: [run])
    assert index_text(LONG) == "我们用 sqlit 的 fts5 做全文检索 用户不吃香菜"
    assert index_text("用户不吃香菜") == "用户不吃香菜"
