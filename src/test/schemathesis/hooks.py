"""Schemathesis hooks for SchemathesisTests."""

import base64
import math
import re

import schemathesis
from schemathesis import GenerationMode

# An import's body is JSON Lines, which the contract describes as text: sent as the text generated.
schemathesis.serializer.alias("application/x-ndjson", "text/plain")

# openapi.yaml's pattern of a cursor (Cursors.PATTERN).
CURSOR = re.compile(r"^[A-Za-z0-9_-]{2,1360}$")

# The longest wait for a held lock a generated acquire asks for (the contract allows 60 s).
LONGEST_WAIT = 1


@schemathesis.hook
def map_case(context, case):
    """Corrects what Schemathesis generates where it cannot know better; each says why."""
    _real_cursor(case.query)
    _shorten_wait(case.body)
    _drop_headers_a_positive_case_cannot_have(case)
    _headers_http_can_carry(case)
    return case


def _real_cursor(query):
    """Makes a generated cursor one the service could have answered.

    A cursor is opaque: only the `nextCursor` of a page names a position (URL-safe Base64 of the
    page's last id), and no schema can say which texts those are, as none can say which tokens a
    server issued. A cursor the contract's pattern admits is taken as an id and encoded as the
    service encodes one, so that it stays schema-valid and becomes a position; a cursor generated
    to break the pattern is left as it is, for the service to refuse.
    """
    if isinstance(query, dict) and isinstance(query.get("cursor"), str) and CURSOR.match(query["cursor"]):
        last_id = query["cursor"][:255]
        query["cursor"] = base64.urlsafe_b64encode(last_id.encode()).decode().rstrip("=")


def _shorten_wait(body):
    """Bounds the run's time: a valid `waitSeconds` longer than a second becomes one second.

    An acquire of a held lock waits up to `waitSeconds` (up to a minute) before its 423; a run of a
    few hundred requests cannot afford that, nor can a request timeout. A value generated to be
    invalid is left as it is; waiting itself is tested in LockApiTests.
    """
    if not isinstance(body, dict):
        return
    wait = body.get("waitSeconds")
    if (
        isinstance(wait, (int, float))
        and not isinstance(wait, bool)
        and math.isfinite(wait)
        and float(wait).is_integer()
        and LONGEST_WAIT < wait <= 60
    ):
        body["waitSeconds"] = LONGEST_WAIT


def _drop_headers_a_positive_case_cannot_have(case):
    """Leaves out of a positive case an optional header that breaks its own pattern.

    The coverage phase builds header values of letters and digits only (schemathesis' own
    simplification), and fills optional headers in with such a value even where the contract's
    pattern needs another character (`If-Match: "3"` or `*`): a case it calls valid that is not.
    An optional header may be left out, which keeps the case valid as it claims to be.
    """
    if case.meta is None or case.meta.generation.mode != GenerationMode.POSITIVE or not case.headers:
        return
    for parameter in case.operation.headers:
        pattern = parameter.definition.get("schema", {}).get("pattern")
        value = case.headers.get(parameter.name)
        if not parameter.is_required and pattern and isinstance(value, str) and not re.search(pattern, value):
            del case.headers[parameter.name]


def _headers_http_can_carry(case):
    """Spells a generated header value that HTTP cannot carry in bytes it can.

    A header field's value is bytes (RFC 9110: visible ASCII and obs-text, which clients encode as
    Latin-1); a value generated to break a pattern may hold characters beyond Latin-1, which the
    client refuses to send at all. Each such character becomes `\u00e9` (obs-text): the value still
    breaks every pattern of the contract's headers (all ASCII), and reaches the service to be refused.
    """
    if not case.headers:
        return
    for name, value in list(case.headers.items()):
        if isinstance(value, str) and any(ord(c) > 0xFF for c in value):
            case.headers[name] = "".join(c if ord(c) <= 0xFF else "\u00e9" for c in value)
