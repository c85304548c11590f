"""The patterns of sensitive.py, each with the words a text must hold for it to match.

A scan runs on every write, every record an import reads and every record a context prints.
Compiling every pattern would slow each of those commands, and most texts hold a secret nowhere:
a pattern is compiled and run only for a text that holds its trigger word (and, for one that
names its value with a separator, one of the separators), or, for one that finds numbers, a
long enough run of digits.
"""
from __future__ import annotations

import re
from functools import cache

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
# What each pattern above (in the same order) cannot match without: lower-case words, of which
# the lower-cased text must hold one; none for the patterns that find numbers, which need one
# of _NUMBER's. Case-blind, a word could also be spelt with a letter that lower() keeps as it is
# (paſſword): such a spelling is not looked for.
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
# "key", "token" and "pass" are everyday words, but a value they name follows a separator, which
# has no other case forms: a pattern written with one is tried only when the text holds one.
_SEPARATORS = ":=：是为為は"
# Every number the patterns without trigger words find has nine digits or more (an SSN; a
# mobile number has 11, a card 13, a resident id 18), each next to the one before or one space
# or hyphen on; \d takes other scripts' digits too (０, ٣), as the patterns do.
_NUMBER = r"\d(?:[ -]?\d){8}"
_ALSO_SEPARATOR = tuple(_SEP in source or _SEP_CJK in source for _, _, source in _SOURCES)
_compiled: dict[int, re.Pattern[str]] = {}
_chosen: dict = {}  # by kinds: [(index, triggers, needs a separator)]


def patterns(text: str, kinds) -> list[tuple[str, str, re.Pattern[str]]]:
    """[(kind, check, pattern)] that could match `text`, of `kinds` (None: all), compiled on
    first use."""
    if text.isascii() and len(text) < 20 and text.isalpha():
        return []  # a field such as "user": every pattern needs a digit, a mark or 20 letters
    key = kinds if kinds is None else tuple(kinds)
    chosen = _chosen.get(key)
    if chosen is None:
        chosen = _chosen[key] = [
            (index, _TRIGGERS[index], _ALSO_SEPARATOR[index])
            for index, (kind, _, _) in enumerate(_SOURCES) if key is None or kind in key]
    lowered = text.lower()
    number = separator = None
    tried = []
    # Loops, not any(): a scan runs on every string of every record an import reads, and a
    # generator costs more than the few tests it runs.
    for index, triggers, needs_separator in chosen:
        if not triggers:
            if number is None:
                number = _number().search(text) is not None
            if not number:
                continue
        else:
            for word in triggers:
                if word in lowered:
                    break
            else:
                continue
        if needs_separator:
            if separator is None:
                separator = False
                for char in _SEPARATORS:
                    if char in text:
                        separator = True
                        break
            if not separator:
                continue
        pattern = _compiled.get(index)
        if pattern is None:
            pattern = _compiled[index] = re.compile(_SOURCES[index][2])
        tried.append((_SOURCES[index][0], _SOURCES[index][1], pattern))
    return tried


@cache
def _number() -> re.Pattern[str]:
    return re.compile(_NUMBER)
