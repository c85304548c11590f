"""Find secrets and personal data in free text, so they are neither stored nor echoed back.

Detection is by pattern plus a check where one exists (Luhn for cards, the GB 11643 check digit
for Chinese resident ids), tuned to stay quiet on ordinary notes: dates, versions, git shas,
times, amounts and plain Chinese or English sentences. For a credential written as
`password: x` or 密码是x only the value is reported, so redacted text keeps its sense.

Credentials (kinds api_key and password) covered:
- PEM private keys (RSA, EC, DSA, OpenSSH, PKCS#8, encrypted, PGP), the whole block, or from
  BEGIN to the end of the base64 when a paste lost its END line;
- provider tokens by their prefix: OpenAI and Anthropic sk-, Stripe secret and restricted keys
  and webhook secrets, GitHub, GitLab, npm, Hugging Face, AWS key ids, Slack tokens and webhook
  URLs, Discord webhook URLs, Google API keys and OAuth access tokens, JWTs;
- values named by a key word (api_key=, token:, aws_secret_access_key =, 密钥是), by an
  Authorization or Proxy-Authorization header, or by password, passwd, pwd, passphrase, 密码,
  密碼, 口令 or パスワード with or without a separator, by pw: and pass: (DB_PASS=), or in a
  sentence ("my password is …", "the password for the server is …"); a quoted value is
  taken whole, spaces and all;
- the password in a URL (scheme://user:password@host);
- passwords on a command line: mysql/mariadb -p, --password=, sshpass -p, redis-cli -a,
  curl -u user:password, openssl -pass pass:, PGPASSWORD= and similar variables.
Placeholders (<password>, ${PW}, $DB_PASSWORD, YOUR_TOKEN, ****) are not credentials.

The patterns, each with the words a text must hold for it to be tried, are in
sensitive_patterns.py; the checks, the merging and the masking are here.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from .sensitive_patterns import patterns

KINDS = ("api_key", "password", "national_id", "card_number", "email", "phone")
# When two findings cover the same text, the earlier kind in KINDS names it.
_RANK = {kind: rank for rank, kind in enumerate(KINDS)}
_PHRASES = {
    "api_key": "an API key",
    "password": "a password",
    "national_id": "an ID number",
    "card_number": "a card number",
    "email": "an e-mail address",
    "phone": "a phone number",
}

# Words that fill a credential slot in config and docs without being a credential.
_PLACEHOLDERS = {"true", "false", "null", "none", "nil", "required", "optional", "yes", "no",
                 "empty", "unset", "changeme", "redacted", "hidden", "secret", "password",
                 "pass"}
# Paths, templates, command substitutions and our own redactions and masks.
_NOT_PASSWORD_STARTS = ("/", "~", "<", "${", "$(", "{{", "[REDACTED", "[secret")
# Retina image names (icon@2x.png) look like e-mail addresses.
_FILE_SUFFIXES = {"png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "pdf"}
_MAX_CARD_GROUPS = 5
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def find_sensitive(text: str, kinds: tuple[str, ...] | None = None) -> list[dict]:
    """Secrets and personal data in text: [{"kind", "start", "end"}], in order, not overlapping.
    `kinds` limits the search to those kinds."""
    found: list[tuple[int, int, str]] = []
    for kind, check, pattern in patterns(text, kinds):
        group = "v" if "v" in pattern.groupindex else 0
        for match in pattern.finditer(text):
            if check == "card":
                found.extend((start, end, kind) for start, end in _card_spans(match))
                continue
            span = _accept(check, match.group(group), match.start(group))
            if span:
                found.append((*span, kind))
    if not found:
        return []
    found.sort(key=lambda f: (f[0], f[0] - f[1], _RANK[f[2]]))
    findings: list[dict] = []
    for start, end, kind in found:
        if not findings or start >= findings[-1]["end"]:
            findings.append({"kind": kind, "start": start, "end": end})
    return findings


def _accept(check: str, value: str, start: int) -> tuple[int, int] | None:
    """Check one candidate and return its span, or None when it is not sensitive after all."""
    # Judge the value without trailing sentence punctuation, but redact all of it: a password
    # may end in "!" and a leaked last character is worse than a swallowed full stop.
    bare = value.rstrip(".!?)]}>:")
    if not bare or not _CHECKS[check](bare):
        return None
    return start, start + len(value)


def _looks_random(value: str) -> bool:
    # Keys mix letters and digits; "YOUR_API_KEY" or "${TOKEN}" or a long word do not.
    return (len(value) >= 16 and any(c.isdigit() for c in value)
            and any(c.isalpha() for c in value))


def _looks_like_sk_key(value: str) -> bool:
    # Keys mix case or have one long unbroken run; a slug like sk-learn-estimators-v2 has neither.
    longest_run = max(len(part) for part in value.split("-"))
    return _looks_random(value) and (value != value.lower() or longest_run >= 16)


def _plausible_password(value: str) -> bool:
    if value.lower() in _PLACEHOLDERS or value.startswith(_NOT_PASSWORD_STARTS):
        return False  # paths (PWD=/home/x), placeholders, templates, our own redactions
    if _names_a_variable(value):
        return False
    return set(value) - set("*x•.") != set()  # "****" is already masked


def _names_a_variable(value: str) -> bool:
    # --password=$DB_PASSWORD or %DB_PASSWORD% points at the password; it is not the password.
    # Only upper-case names count, so a password such as $ecret9 is still one.
    if not value.startswith(("$", "%")):
        return False
    name = value[1:].removesuffix("%")
    return name[:1].isalpha() and name.replace("_", "").isalnum() and name.isupper()


def _password_like(value: str) -> bool:
    # With no separator after the word, a real password has length and a digit or symbol;
    # "password manager", "passwd --stdin" and a link to a reset page do not.
    return (len(value) >= 6 and not value.isalpha() and not value.startswith(("-", "("))
            and "://" not in value and _plausible_password(value))


def _short_named(value: str) -> bool:
    # After pw: or pass:, which also name widths and test counts (pw = 0.5, pass: 3/5), a
    # password mixes letters with digits or marks, or is a PIN of six digits or more.
    if len(value) < 4 or value.isalpha() or not _plausible_password(value):
        return False
    return any(c.isalpha() for c in value) or (value.isdigit() and len(value) >= 6)


# Endings of the English words that follow "the password is" in prose (generated, required,
# compromised, configurable, insufficient, automatically ...).
_PROSE_ENDINGS = ("ed", "able", "ible", "ent", "ant", "ive", "ous", "al", "ic", "ly", "ing",
                  "ful", "less", "ness", "tion", "sion", "ary", "ory", "ise", "ize")


def _said_password(value: str) -> bool:
    # "my password is hunter2": a value with a non-letter, or one long run of letters that
    # no English word ending marks as prose (correcthorsebatterystaple).
    if not _plausible_password(value):
        return False
    if not value.isalpha():
        return True
    return len(value) >= 12 and not value.lower().endswith(_PROSE_ENDINGS)


def _credential_like(value: str) -> bool:
    # An Authorization value: anything but a scheme word or a placeholder such as YOUR_TOKEN.
    # Basic credentials are base64 and may lack digits, but they mix upper and lower case.
    mixed_case = value != value.lower() and value != value.upper()
    return _plausible_password(value) and (any(c.isdigit() for c in value)
                                           or (len(value) >= 12 and mixed_case))


def _url_password_ok(userinfo: str) -> bool:
    # user:${PW}@host and user:password@host are documentation, not a leak.
    return _plausible_password(userinfo) and _plausible_password(userinfo.partition(":")[2])


def _id_check_digit_ok(value: str) -> bool:
    total = sum(int(d) * w for d, w in zip(value, _ID_WEIGHTS))
    return "10X98765432"[total % 11] == value[17].upper()


_CHECKS: dict[str, Callable[[str], bool]] = {
    "": bool,
    "random": _looks_random,
    "sk": _looks_like_sk_key,
    "password": _plausible_password,
    "password-like": _password_like,
    "credential": _credential_like,
    "url": _url_password_ok,
    "password is": _said_password,
    "short": _short_named,
    "cn_id": _id_check_digit_ok,
    "email": lambda v: v.rsplit(".", 1)[-1].lower() not in _FILE_SUFFIXES,
    "phone": lambda v: 8 <= sum(c.isdigit() for c in v) <= 15,
}


def _card_spans(match: re.Match[str]) -> list[tuple[int, int]]:
    """Card numbers inside a run of digit groups: 13-19 digits passing Luhn.

    Groups are tried left to right, longest first, so a card next to a date or another number
    is still found; digits inside one group are never split. Cards are printed in at most five
    groups (4-4-4-4-3), which also bounds the work on long runs of small numbers.
    """
    base = match.start()
    groups = [(base + m.start(), base + m.end(), m.group())
              for m in re.finditer(r"\d+", match.group())]
    spans, i = [], 0
    while i < len(groups):
        best, number = None, ""
        # Every card network starts 2-6; this rules out millisecond timestamps.
        if groups[i][2][0] in "23456":
            for j in range(i, min(i + _MAX_CARD_GROUPS, len(groups))):
                number += groups[j][2]
                if len(number) > 19:
                    break
                if len(number) >= 13 and _luhn_ok(number):
                    best = j
        if best is None:
            i += 1
        else:
            spans.append((groups[i][0], groups[best][1]))
            i = best + 1
    return spans


def _luhn_ok(number: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(number)):
        digit = int(char)
        if position % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def redact(text: str) -> str:
    """text with every finding replaced by [REDACTED:<kind>]."""
    parts, last = [], 0
    for finding in find_sensitive(text):
        parts.append(text[last:finding["start"]])
        parts.append(f"[REDACTED:{finding['kind']}]")
        last = finding["end"]
    parts.append(text[last:])
    return "".join(parts)


def describe(findings: list[dict]) -> str:
    """The distinct kinds found, in order, as a phrase: "an API key and an e-mail address"."""
    kinds = list(dict.fromkeys(f["kind"] for f in findings))
    phrases = [_PHRASES.get(kind, "a " + kind.replace("_", " ")) for kind in kinds]
    if not phrases:
        return "nothing sensitive"
    if len(phrases) == 1:
        return phrases[0]
    return f"{', '.join(phrases[:-1])} and {phrases[-1]}"


SECRET_KINDS = ("api_key", "password")
SECRET_MARKER = "[secret removed]"
def find_credentials(text: str) -> list[dict]:
    """The credentials (API keys, tokens, passwords) in text; cheap when there can be none."""
    return find_sensitive(text, SECRET_KINDS)


def mask_secrets(text: str) -> str:
    """text with every credential (API keys, tokens, passwords) replaced by SECRET_MARKER;
    other personal data is left as it is."""
    parts, last = [], 0
    for finding in find_credentials(text):
        parts.append(text[last:finding["start"]])
        parts.append(SECRET_MARKER)
        last = finding["end"]
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


# A JSON field named like a credential: its value is judged as "name=value", as written.
_CREDENTIAL_FIELDS = ("pass", "pw", "token", "secret", "api_key", "apikey", "api-key",
                      "access_key", "private_key", "auth", "密码", "口令", "密钥", "令牌")


_named_fields: dict[str, bool] = {}  # a record's few field names recur in every record


def _probe(key, value: str) -> str:
    if not isinstance(key, str):
        return value
    named = _named_fields.get(key)
    if named is None:
        if len(_named_fields) >= 1024:
            _named_fields.clear()
        lowered = key.lower()
        named = _named_fields[key] = any(word in lowered for word in _CREDENTIAL_FIELDS)
    return f"{key}={value}" if named else value


def credentials_in_json(value, key=None) -> list[dict]:
    """The credentials in a JSON value's strings, each judged with its field name; the
    names of ordinary fields ("key", "sessionId") never trigger a pattern by themselves."""
    if isinstance(value, str):
        return find_credentials(_probe(key, value))
    if isinstance(value, dict):
        return [f for k, v in value.items() for f in credentials_in_json(v, k)]
    if isinstance(value, list):
        return [f for v in value for f in credentials_in_json(v, key)]
    return []


# A context's records share most of their short strings (scopes, domains, tags, ids, times):
# each is judged once per process. Long texts are not kept.
_masked: dict[tuple, str] = {}
_MEMO_CHARS = 256


def _masked_string(value: str, probe: str) -> str:
    if probe is not value and find_credentials(probe):
        masked = mask_secrets(value)
        return masked if masked != value else SECRET_MARKER
    return mask_secrets(value)


def mask_json(value, key=None):
    """A JSON value (a record, a result) with every credential masked, each string judged
    with its field name: {"password": "hunter2"} loses the value as "password=hunter2"
    would."""
    if isinstance(value, str):
        probe = _probe(key, value)
        if len(value) > _MEMO_CHARS:
            return _masked_string(value, probe)
        memo = (value, probe if probe is not value else None)  # all the answer depends on
        masked = _masked.get(memo)
        if masked is None:
            if len(_masked) >= 4096:
                _masked.clear()
            masked = _masked[memo] = _masked_string(value, probe)
        return masked
    if isinstance(value, dict):
        return {k: mask_json(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_json(v, key) for v in value]
    return value
