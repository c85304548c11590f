"""The patterns of sensitive.py, and the cheap tests that decide which of them a text needs.

A scan runs on every write and a bulk import checks every record, while running a pattern costs
microseconds per hundred characters. So a pattern is tried only when the text holds its trigger
word and what else it cannot match without (its needs: a digit, a separator, a prefix), tested
mostly with substring tests that cost hundredths of a microsecond. Patterns are grouped by the
characters their needs start with: one class search rules out most Chinese text, a dozen
substring tests most English. The needs never change what is found: tests/test_secret_guards.py
checks against every pattern tried behind its trigger alone.
"""
from __future__ import annotations

import re

# A credential value: printable ASCII up to a space, quote or list separator. Real passwords are
# ASCII, and stopping at Chinese keeps 密码是什么 ("what is the password") from matching.
_VALUE = r"(?:(?![\"'`,;])[!-~])+"
_SEP = r"[\"']?\s*(?:[:=：]|是|为|為)\s*[\"'“‘「]?"
# A password may be a quoted phrase ("correct horse battery staple"): after an opening quote
# the value runs to its closing quote on the same line, else it is one word as above.
_QUOTED = "|".join(rf"(?<={open_}){body}{{1,128}}(?={close})" for open_, body, close in (
    ('"', r'[^"\r\n]', '"'), ("'", r"[^'\r\n]", "'"), ("“", r"[^”\r\n]", "”"),
    ("‘", r"[^’\r\n]", "’"), ("「", r"[^」\r\n]", "」")))
_PW_VALUE = rf"(?:{_QUOTED}|{_VALUE})"
# A command-line argument, quoted or not; the closing quote stays outside the value.
_ARG = r"[\"'`]?(?P<v>[^\s\"'`]+)"
# Up to a dozen more arguments of the same command: bounded, so that a line of repeated command
# names costs a dozen steps per name rather than a scan to the end of the line.
_ARGS = r"(?:\s+[^\s;|&]+){0,12}?"
_W = "A-Za-z0-9_"  # not \w: Chinese characters are \w, and 卡号4111… must still match
_B64 = "A-Za-z0-9+/"
# (kind, check, pattern). A pattern reports its group "v" when it has one, else the whole
# match. The lookbehinds let a match start only where a run begins, which keeps scanning linear
# on long blobs of base64 or digits.
_KEY_NAMES = r"(?:api[_-]?key|token|secret(?:[_-]?key)?|access[_-]?key|private[_-]?key)"
_PASSWORD_NAMES = r"(?:password|passwd|passphrase|pwd)"
# "for the server", "to the wifi": up to four words between a password word and its "is".
_FOR_WHAT = r"(?:\s+(?:for|to|of|on|at)(?:\s+[^\s.,;:!?\"']+){1,4}?)?"
_SEP_CJK = r"[\"']?\s*(?:[:=：]|是|为|為|は)\s*[\"'“‘「]?"  # パスワードは…
_GITLAB_PREFIXES = ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glimt-", "gloas-",
                    "glsoat-", "glagent-", "glffct-")

# A PEM body is lines of base64, with optional Proc-Type/DEK-Info headers; lines end in real
# breaks or, inside JSON, in \n escapes. A short unpadded line counts only just before END, so
# a truncated paste stops at the end of its base64 and not in the prose after it.
_PEM_LABEL = r"(?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
_PEM_BREAK = r"(?:\s|\\[rn])"
_PEM_LINE = (rf"(?:[{_B64}]{{16,}}=*|[{_B64}]*=+|(?:Proc-Type|DEK-Info):[^\r\n\\]*"
             rf"|[{_B64}]+(?={_PEM_BREAK}*-----END ))")
_PEM = (rf"-----BEGIN {_PEM_LABEL}{_PEM_BREAK}*{_PEM_LINE}(?:{_PEM_BREAK}+{_PEM_LINE})*"
        rf"(?:{_PEM_BREAK}*-----END {_PEM_LABEL})?")

_TOKENS: tuple[tuple[str, str, str], ...] = (
    ("api_key", "", _PEM),
    ("api_key", "sk", rf"(?<![{_W}-])sk-[A-Za-z0-9_-]{{20,}}"),
    # Stripe secret and restricted keys; publishable pk_ keys are meant to be public.
    ("api_key", "", rf"(?<![{_W}-])[rs]k_(?:live|test)_[A-Za-z0-9]{{16,}}"),
    ("api_key", "", rf"(?<![{_W}-])whsec_[{_B64}]{{20,}}=*"),
    ("api_key", "", rf"(?<![{_W}-])(?:gh[pousr]_[A-Za-z0-9]{{30,}}|github_pat_[{_W}]{{22,}})"),
    ("api_key", "", (rf"(?<![{_W}-])(?:{'|'.join(_GITLAB_PREFIXES)})[{_W}-]{{20,}}"
                     rf"(?:\.[{_W}-]+)*")),
    # Exactly 36 characters: npm_config_cache and friends are settings, not tokens.
    ("api_key", "", rf"(?<![{_W}-])npm_[A-Za-z0-9]{{36}}(?![A-Za-z0-9])"),
    ("api_key", "", rf"(?<![{_W}-])hf_[A-Za-z0-9]{{30,}}"),
    ("api_key", "", r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"),
    ("api_key", "", rf"(?<![{_W}-])(?:xox[abposre]|xapp)-[A-Za-z0-9-]{{10,}}"),
    ("api_key", "", (r"(?<![A-Za-z0-9])https://hooks\.slack\.com/(?:services|workflows|triggers)/"
                     r"[A-Za-z0-9_/-]{10,}")),
    ("api_key", "", (r"(?<![A-Za-z0-9])https://(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/"
                     r"\d+/[A-Za-z0-9_-]{20,}")),
    ("api_key", "", rf"(?<![{_W}-])AIza[0-9A-Za-z_-]{{35}}(?![{_W}-])"),
    ("api_key", "", rf"(?<![{_W}.-])ya29\.[{_W}-]{{20,}}"),
    ("api_key", "", rf"(?<![{_W}.-])eyJ[{_W}-]{{4,}}\.eyJ[{_W}-]{{4,}}\.[{_W}-]*"),
)

_NAMED: tuple[tuple[str, str, str], ...] = (
    ("api_key", "random", r"(?i)(?<![A-Za-z0-9])bearer\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)"),
    # After the header name any scheme word is skipped; key:secret pairs are kept whole.
    ("api_key", "credential", (rf"(?i)(?<![{_W}-])(?:proxy-)?authori[sz]ation[\"']?[ \t]*[:=]"
                               r"[ \t]*[\"']?(?:[a-z][a-z0-9-]*[ \t]+)?"
                               rf"(?P<v>[{_W}.~+/-]+(?::[{_W}.~+/-]+)*=*)")),
    # An AWS secret key is 40 characters of base64 with nothing to recognise it by but its name.
    ("api_key", "", (rf"(?i)(?<![A-Za-z0-9])(?:aws_?)?secret_?access_?key{_SEP}"
                     rf"(?P<v>[{_B64}]{{40}})(?![{_B64}=])")),
    # DB_PASSWORD=…, X-Api-Key: …, "secret": "…"; the prefix words end in _ or - so that
    # OLDPWD or max_tokens do not count.
    ("api_key", "random", (rf"(?i)(?<![{_W}-])(?:[A-Za-z0-9]+[_-])*{_KEY_NAMES}"
                           rf"(?![A-Za-z0-9]){_SEP}(?P<v>{_VALUE})")),
    ("api_key", "random", rf"(?:密钥|秘钥|令牌)\s*{_SEP}(?P<v>{_VALUE})"),
    ("password", "password", (rf"(?i)(?<![{_W}-])(?:[A-Za-z0-9]+[_-])*{_PASSWORD_NAMES}"
                              rf"(?![A-Za-z0-9]){_SEP}(?P<v>{_PW_VALUE})")),
    # pw: and pass: (DB_PASS=, but not a test runner's PASS: or "pass the salt"); the value is
    # judged more strictly, since pw and pass are also words and variables.
    ("password", "short", (rf"(?<![{_W}-])(?:(?:[A-Za-z0-9]+_)*(?:[Pp]ass|[Pp][Ww])"
                           rf"|(?:[A-Za-z0-9]+_)+PASS)(?![A-Za-z0-9]){_SEP}(?P<v>{_PW_VALUE})")),
    # "the password is stored in the vault": after "is" a word counts only when it could not
    # be prose (sensitive.py). "The password for the server is X" names what it opens.
    ("password", "password is",
     rf"(?i)(?<![A-Za-z0-9])(?:password|passphrase|pwd|pw){_FOR_WHAT}\s+is(?:\s*[:：])?\s+"
     rf"[\"'“‘「]?(?P<v>{_PW_VALUE})"),
    # No separator at all ("password hunter2x9", 密码 abc123456): only a value that could not be
    # a word of the sentence counts, so "password manager" and 密码 错误 stay prose.
    ("password", "password-like",
     rf"(?i)(?<![A-Za-z0-9])(?:password|passwd|passphrase|pwd)\s+[\"']?(?P<v>{_VALUE})"),
    ("password", "password", rf"(?:密码|密碼|口令|パスワード)\s*{_SEP_CJK}(?P<v>{_PW_VALUE})"),
    ("password", "password-like", rf"(?:密码|密碼|口令|パスワード)\s*[\"'“‘「]?(?P<v>{_VALUE})"),
    # scheme://user:password@host. The whole user:password is reported: a finding starting at
    # the password would lose to the e-mail address that "password@host.com" also looks like.
    # The password runs to the last @ before the path, since people paste them unescaped.
    ("password", "url", (r"(?i)(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://"
                         r"(?P<v>[^\s/?#@:]*:[^\s/?#]+)@")),
)

# Case matters here: mysql -P is the port, sshpass -P the prompt.
_MYSQL = r"(?:mysql(?:dump|admin|import|check|show|sh|binlog)?|mariadb(?:-?dump|-?admin)?)"
_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("password", "password", rf"(?<![{_W}-]){_MYSQL}{_ARGS}\s+-p{_ARG}"),
    ("password", "password", rf"(?i)(?<![{_W}-])--pass(?:word|wd)?={_ARG}"),
    ("password", "password", rf"(?<![{_W}-])sshpass(?:\s+-[^\sp]\S*)*\s+-p\s*{_ARG}"),
    ("password", "password", rf"(?<![{_W}-])redis-cli{_ARGS}\s+(?:-a|--pass)\s+{_ARG}"),
    ("password", "password",
     rf"(?<![{_W}-])curl{_ARGS}\s+(?:-u|--user)[\s=]*[\"']?[^\s:\"']*:(?P<v>[^\s\"'`]+)"),
    ("password", "password", rf"(?<![{_W}-])-pass(?:in|out)?\s+[\"']?pass:(?P<v>[^\s\"'`]+)"),
    ("password", "password",
     rf"(?i)(?<![{_W}-])(?:PGPASSWORD|REDISCLI_AUTH|SSHPASS){_SEP}(?P<v>{_VALUE})"),
)

_PERSONAL: tuple[tuple[str, str, str], ...] = (
    # Resident id: region, birth date YYYYMMDD, sequence, check digit (verified in _CHECKS).
    ("national_id", "cn_id", (r"(?<![0-9A-Za-z])[1-9]\d{5}(?:19|20)\d\d(?:0[1-9]|1[0-2])"
                              r"(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx](?![0-9A-Za-z])")),
    ("national_id", "", r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d\d-(?!0000)\d{4}(?![\d-])"),
    ("card_number", "card", rf"(?<![{_W}.,-])\d+(?:[ -]\d+)*(?![{_W}-])"),
    # (?!:\S) leaves out ssh remotes such as git@github.com:owner/repo.
    ("email", "email", (r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+"
                        r"(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])(?!:\S)")),
    ("phone", "phone",
     rf"(?<![{_W}+])(?:(?:\+|00)86[ -]?)?1[3-9]\d(?:[ -]?\d{{4}}){{2}}(?![{_W}-])"),
    ("phone", "phone", rf"(?<![{_W}+])\+\d[\d ()-]{{6,22}}\d(?![{_W}-])"),
)
_SOURCES = _TOKENS + _NAMED + _COMMANDS + _PERSONAL
# What each pattern above (in the same order) cannot match without: lower-case substrings, of
# which the text must hold one (empty: none; _NEEDS below narrow every pattern further). A
# pattern is compiled the first time a text holds its trigger and needs, so a process pays only
# for the patterns its text could match (compiling them all costs about 25 ms, more than a
# whole `ekko-mem log`).
_PASSWORD_WORDS = ("passw", "passphrase", "pwd")
_CN_PASSWORD_WORDS = ("密码", "密碼", "口令", "パスワード")
_TRIGGERS: tuple[tuple[str, ...], ...] = (
    ("-----begin",), ("sk-",), ("sk_live", "sk_test", "rk_live", "rk_test"), ("whsec_",),
    ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), _GITLAB_PREFIXES, ("npm_",),
    ("hf_",), ("akia", "asia"), ("xox", "xapp-"), ("hooks.slack",), ("discord",), ("aiza",),
    ("ya29.",), ("eyj",),
    ("bearer",), ("authoriz", "authoris"), ("secret",), ("key", "token", "secret"),
    ("密钥", "秘钥", "令牌"), _PASSWORD_WORDS, ("pass", "pw"), ("password", "passphrase", "pw"),
    _PASSWORD_WORDS, _CN_PASSWORD_WORDS, _CN_PASSWORD_WORDS, ("://",),
    ("mysql", "mariadb"), ("--pass",), ("sshpass",), ("redis-cli",), ("curl",), ("-pass",),
    ("pgpassword", "rediscli_auth", "sshpass"),
    (), (), (), ("@",), (), ("+",),
)
_compiled: dict[int, re.Pattern[str]] = {}


# A need is a tuple of words, of which the text as written must hold one (tested in place: a
# call would cost as much), or a function of the text (and what is known about it so far)
# that answers once per text.

def _lowered(text: str, known: dict) -> str:
    lowered = known.get(_lowered)
    if lowered is None:
        lowered = known[_lowered] = text.lower()
    return lowered


def _lower_has(*words: str):
    """The need that the lower-cased text holds one of the words: a pattern's triggers."""
    def need(text: str, known: dict) -> bool:
        lowered = _lowered(text, known)
        for word in words:
            if word in lowered:
                break
        else:
            return False
        return True
    return need


# Letters other than their own two cases that a case-blind pattern equates with an ASCII
# letter, and that lower() does not turn into that letter (the Kelvin sign K does): İ and ı
# (i) and ſ (s). Without them, a case-blind match of ASCII words is a plain match of the words
# in the lower-cased text, character for character (tests check this for every code point).
_CASE_ODD = "İıſ"


def _followed(words: tuple[str, ...], tail: str, then: str = ""):
    """The need that, in the lower-cased text, one of the words is followed by what `tail`
    matches and, when `then` is given, by one of its characters next: what a case-blind
    pattern needs around its key word. It holds outright for a text with a letter of
    _CASE_ODD. (`then` is apart from the regex because a class with Chinese in it takes a
    third of a millisecond to compile.)"""
    compiled: list[re.Pattern[str]] = []

    def need(text: str, known: dict) -> bool:
        if not text.isascii() and any(char in text for char in _CASE_ODD):
            return True
        if not compiled:
            compiled.append(re.compile(tail))
        lowered = _lowered(text, known)
        for word in words:
            at = lowered.find(word)
            while at >= 0:
                found = compiled[0].match(lowered, at + len(word))
                if found:
                    end = found.end()
                    if not then or (end < len(lowered) and lowered[end] in then):
                        return True
                at = lowered.find(word, at + 1)
        return False
    return need


def _search(*sources: str):
    """The need that the text matches one of the regular expressions, compiled on first use.
    Each starts with a literal, which the regex engine finds about as fast as a substring
    test; scanning for a class of characters costs ten times as much."""
    compiled: list[re.Pattern[str]] = []

    def need(text: str, known: dict) -> bool:
        if not compiled:
            compiled.extend(map(re.compile, sources))
        return any(pattern.search(text) for pattern in compiled)
    return need


_card_runs: list[re.Pattern[str]] = []


def _card_digits(text: str, known: dict) -> bool:
    """What _card_spans reports needs: 13 digits, in groups joined by single spaces or hyphens,
    the first group starting with 2-6 (digits as \\d takes them: ０ and ٣ count)."""
    if text.isascii() and sum(map(text.count, "0123456789")) < 13:
        return False
    if not _card_runs:
        _card_runs.append(re.compile(r"[2-6][\d -]{12,}"))
    return any(len(part) - part.count(" ") - part.count("-") >= 13
               for found in _card_runs[0].findall(text)
               for part in re.split("[ -]{2,}", found))


# What each pattern (in the order of _SOURCES) cannot match without: a group of needs, tested
# once for all the patterns of the group, then the pattern's own. Why each need is safe:
# - Words are text that every match contains, written in the pattern outside any case-blind
#   part, or a letter of a case-blind word in every case form the pattern matches (b B; c C;
#   h H; p P; k K and the Kelvin sign), or a caseless separator (: = 是); or what the
#   pattern's check demands of the value: a "random" key has a digit, and its value admits
#   only ASCII ones. Single characters come first: in a text that is not ASCII, a longer
#   ASCII word is copied to the text's width for every test.
# - \d also matches other scripts' digits (０, ٣), so _DIGITS stands only for [0-9] or a
#   literal digit in the pattern; the searches take \d as the patterns do, and each is a part
#   of its pattern or looser (an id's month and day as [01]\d[0-3]\d).
# - A group's _lower_has words are each in one of its patterns' triggers ("pass" in "passw").
# - _followed needs no more of the lower-cased text than the case-blind pattern needs of the
#   text itself.
_SEP_CHARS = (":", "=", "：", "是", "为", "為")  # the separators of _SEP
_QUOTE_SPACE = r"[\"']?\s*"  # what comes between a key word and its separator in _SEP
_DIGITS = tuple("0123456789")
_KEY_SEP = _followed(("key", "token", "secret"), _QUOTE_SPACE, "".join(_SEP_CHARS))
_PASSWORD_SPELLINGS = ("password", "passwd", "passphrase", "pwd")
# The groups: a pattern is tried only when the text holds one of its group's first
# characters, and no pattern when the text holds none of them (one class search).
_G_HYPHEN, _G_UNDERSCORE, _G_URL = (("-",),), (("_",),), (("/",), ("://",))
_G_DIGIT, _G_AT, _G_J, _G_PLUS = (_DIGITS,), (("@",),), (("J",),), (("+",),)
_G_Y, _G_BEARER, _G_AUTHORIZATION = (("y",),), (("b", "B"), _DIGITS), (("h", "H"), (":", "="))
_G_AKIA = (("A",), ("K", "S", "z"), _search("A(?:KIA|SIA|Iza)"))
_G_KEY = (("k", "K", "\u212a", "c", "C"), _SEP_CHARS)  # key, token, secret
_G_PASSWORD = (("p", "P", "_"), _lower_has("pass", "pw", "rediscli_auth"))
_G_CN = (("密", "秘", "令", "口"),)  # 密钥 秘钥 令牌
_G_CN_PASSWORD = (("密", "口", "パ"),)  # 密码 密碼 口令 パスワード
_NEEDS: tuple[tuple, ...] = (
    (_G_HYPHEN, ("-----BEGIN ",)), (_G_HYPHEN, ("sk-",), _DIGITS),
    (_G_UNDERSCORE, ("k_live_", "k_test_")), (_G_UNDERSCORE, ("whsec_",)),
    (_G_UNDERSCORE, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    (_G_HYPHEN, ("gl",), _GITLAB_PREFIXES), (_G_UNDERSCORE, ("npm_",)), (_G_UNDERSCORE, ("hf_",)),
    (_G_AKIA, ("AKIA", "ASIA")), (_G_HYPHEN, ("xox", "xapp-")),
    (_G_URL, ("https://hooks.slack.com/",)), (_G_URL, ("/api/webhooks/",)), (_G_AKIA, ("AIza",)),
    (_G_Y, ("ya29.",)), (_G_J, (".eyJ",)),
    # bearer, authorization, aws_secret_access_key, named keys, 密钥
    (_G_BEARER,), (_G_AUTHORIZATION,), (_G_KEY, _KEY_SEP), (_G_KEY, _DIGITS, _KEY_SEP),
    (_G_CN, ("密钥", "秘钥", "令牌"), _SEP_CHARS, _DIGITS),
    # passwords: named, pw: and pass:, "is", without a separator, 密码 with and without one,
    # in a URL
    (_G_PASSWORD, _SEP_CHARS, _followed(_PASSWORD_SPELLINGS, _QUOTE_SPACE, "".join(_SEP_CHARS))),
    (_G_PASSWORD, ("ass", "ASS", "pw", "pW", "Pw", "PW"), _SEP_CHARS,
     _followed(("pass", "pw"), _QUOTE_SPACE, "".join(_SEP_CHARS))),
    (_G_PASSWORD, _followed(("password", "passphrase", "pwd", "pw"), _FOR_WHAT + r"\s+is")),
    (_G_PASSWORD, _followed(_PASSWORD_SPELLINGS, r"\s")),
    (_G_CN_PASSWORD, _CN_PASSWORD_WORDS, (*_SEP_CHARS, "は")),
    (_G_CN_PASSWORD, _CN_PASSWORD_WORDS),
    (_G_AT, ("://",)),
    # mysql, --password=, sshpass, redis-cli, curl, openssl, PGPASSWORD=
    (_G_HYPHEN, ("-p",)), (_G_HYPHEN, ("=",)), (_G_HYPHEN, ("sshpass",), ("-p",)),
    (_G_HYPHEN, ("redis-cli",), ("-a", "--pass")), (_G_HYPHEN, ("curl",), ("-u",), (":",)),
    (_G_HYPHEN, ("pass:",)), (_G_PASSWORD, _SEP_CHARS),
    # resident id, SSN, card, e-mail, mobile, international phone
    (_G_DIGIT, _search(r"19\d\d[01]\d[0-3]\d{4}", r"20\d\d[01]\d[0-3]\d{4}")),
    (_G_HYPHEN, _search(r"-\d\d-\d{4}")), (_G_DIGIT, _card_digits), (_G_AT,),
    (_G_DIGIT, _search(r"1[3-9]\d(?:[ -]?\d{4}){2}")), (_G_PLUS, _search(r"\+\d")),
)


def _all_hold(needs: tuple, text: str, known: dict) -> bool:
    """Whether every need holds for `text`; `known` keeps what the functions answered."""
    for need in needs:
        if type(need) is tuple:
            for word in need:
                if word in text:
                    break
            else:
                return False
            continue
        held = known.get(need)
        if held is None:
            held = known[need] = need(text, known)
        if not held:
            return False
    return True


def patterns(text: str, kinds) -> list[tuple[str, str, re.Pattern[str]]]:
    """[(kind, check, pattern)] that could match `text`, compiled on first use. Patterns are
    grouped by the characters their needs start with, so ordinary text costs a class search or
    a dozen substring tests, not a regex per pattern; a costly need is tested once per text."""
    ascii_text = text.isascii()
    if ascii_text and len(text) < 20 and text.isalpha():
        return []  # a field such as "user": every pattern needs a digit, a mark or 20 letters
    plan = _plans[ascii_text].get(kinds) if type(kinds) is tuple or kinds is None else None
    firsts, other_firsts, groups, by_first = plan or _plan(kinds, ascii_text)
    present: list[str] = []
    if not ascii_text or len(text) < 80:
        # Chinese, or a short text, holds few first characters: a class search finds them,
        # and only their groups are tried. A Latin text holds many (a third stops the search).
        found = firsts.search(text)
        while found and len(present) < 3:
            present.append(found.group())
            found = firsts.search(text, found.end())
        if len(present) < 3:
            for char in other_firsts:
                if char in text:
                    present.append(char)
            if not present:
                return []
    if 0 < len(present) < 3:
        chosen = by_first[present[0]]
        for char in present[1:]:  # each group once, in any order
            chosen = chosen + [group for group in by_first[char] if group not in chosen]
    else:
        chosen = [group for group in groups if _any_in(group[0], text)]
    known: dict = {}
    tried = []
    for _, group, members in chosen:
        if group and not _all_hold(group, text, known):
            continue
        for index, words, rest in members:
            if words and not _any_in(words, text):
                continue
            if rest and not _all_hold(rest, text, known):
                continue
            pattern = _compiled.get(index)
            if pattern is None:
                pattern = _compiled[index] = re.compile(_SOURCES[index][2])
            tried.append((_SOURCES[index][0], _SOURCES[index][1], pattern))
    return tried


def _any_in(words: tuple[str, ...], text: str) -> bool:
    for word in words:  # a loop, not any(): a generator costs more than a few tests
        if word in text:
            break
    else:
        return False
    return True


_plans: dict[bool, dict] = {True: {}, False: {}}  # by whether the text is ASCII, by kinds


def _plan(kinds, ascii_text: bool) -> tuple[re.Pattern[str], tuple[str, ...], list, dict]:
    """For `kinds`: a search for the groups' ASCII first characters, their other first
    characters, the groups [(first characters, the group's other needs, [(pattern index, its
    first words, its other needs), ...]), ...] and the groups by first character. A
    pattern's needs are its words, then its trigger (which takes the lower-cased copy), then
    its searches. For an ASCII text, words that are not ASCII are left out, and so are the
    patterns that need only such words."""
    key = tuple(kinds) if kinds is not None else None
    plan = _plans[ascii_text].get(key)
    if plan is None:
        def usable(need):  # None: an ASCII text cannot hold any of the words
            if type(need) is not tuple:
                return need
            return tuple(w for w in need if w.isascii() or not ascii_text) or None

        triggers: dict[tuple, object] = {}  # patterns with the same triggers test them once
        groups: dict[tuple, tuple] = {}
        for index, ((kind, _, _), (group, *needs)) in enumerate(zip(_SOURCES, _NEEDS)):
            if kinds is not None and kind not in kinds:
                continue
            head = [usable(need) for need in group]
            own = [usable(need) for need in needs if type(need) is tuple]
            if _TRIGGERS[index]:
                words = _TRIGGERS[index]
                own.append(triggers.setdefault(words, _lower_has(*words)))
            own += [need for need in needs if type(need) is not tuple]
            if None in head or None in own:
                continue
            first = own.pop(0) if own and type(own[0]) is tuple else ()
            groups.setdefault(group, (head[0], tuple(head[1:]), []))[2].append(
                (index, first, tuple(own)))
        # Every group starts with single characters: a class finds the ASCII ones (one with
        # Chinese in it takes a third of a millisecond to compile), substring tests the others.
        listed = list(groups.values())
        by_first: dict[str, list[tuple]] = {}
        for group in listed:
            for char in group[0]:
                by_first.setdefault(char, []).append(group)
        ascii_firsts = "".join(sorted(re.escape(char) for char in by_first if char.isascii()))
        plan = _plans[ascii_text][key] = (
            re.compile(f"[{ascii_firsts}]" if ascii_firsts else "(?!)"),
            tuple(sorted(char for char in by_first if not char.isascii())), listed, by_first)
    return plan
