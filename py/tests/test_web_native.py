"""The native pieces sds.web takes from the crate sds-http
(``_native.RateLimitHeaders``, ``_native.ClientAddress``): what Python
hands them and gets back. Their rules are sds-http's own tests'."""

from __future__ import annotations

import pytest

import sds
from sds import _native


def refused(limit: int, reset_ms: int, retry: object) -> sds.KeyDecision:
    return sds.KeyDecision(False, limit, 0, reset_ms, retry, 60_000)  # type: ignore[arg-type]


def test_fields_in_text_and_in_asgi_bytes_and_a_policy_that_did_not_decide() -> None:
    headers = _native.RateLimitHeaders("draft-10", ["a", "b"])
    assert (headers.style, headers.policies) == ("draft-10", ("a", "b"))
    ok = sds.KeyDecision(True, 10, 7, 2_001, 0, 60_000)
    text = headers.fields([None, ok])
    assert text == [("RateLimit-Policy", '"b";q=10;w=60'), ("RateLimit", '"b";r=7;t=3')]
    raw = headers.fields([None, ok], True)
    assert raw == [(n.lower().encode(), v.encode()) for n, v in text]
    assert headers.fields([]) == []
    # A refusal that no wait cures (retry None) has no Retry-After; one
    # that waits, the wait rounded up.
    assert [n for n, _ in headers.fields([refused(5, 100, None)])] == ["RateLimit-Policy", "RateLimit"]
    assert headers.fields([refused(5, 9_000, 1_500)])[-1] == ("Retry-After", "2")
    six = _native.RateLimitHeaders("x-ratelimit", ["a"])
    assert six.fields([ok], True)[0] == (b"x-ratelimit-limit", b"10")


def test_what_the_native_pieces_refuse() -> None:
    with pytest.raises(sds.InvalidArgument, match='"draft-10", "draft-6" or "x-ratelimit"'):
        _native.RateLimitHeaders("Draft-10", [])
    with pytest.raises(sds.InvalidArgument, match="printable ASCII"):
        _native.RateLimitHeaders("draft-10", ["ok", "tab\there"])
    with pytest.raises(sds.InvalidArgument, match="2 decisions for 1 policies"):
        _native.RateLimitHeaders("draft-10", ["a"]).fields([None, None])
    with pytest.raises(sds.InvalidArgument, match="KeyDecision"):
        _native.RateLimitHeaders("draft-10", ["a"]).fields([(True, 1)])
    with pytest.raises(sds.InvalidArgument, match=r'peer address "1.2.3.4:80" is not an IP address'):
        _native.ClientAddress().key("1.2.3.4:80")
    _native.check_policy_name("per-user 100/min")
    with pytest.raises(sds.InvalidArgument, match="printable ASCII"):
        _native.check_policy_name("x" * 65)


def test_client_keys() -> None:
    keys = _native.ClientAddress(24, 48, ["10.0.0.0/8"])
    assert keys.trusts_proxies and not _native.ClientAddress().trusts_proxies
    assert keys.key("203.0.113.77") == "203.0.113.0/24"
    assert keys.key("2001:db8:1:2::1") == "2001:db8:1::/48"
    assert keys.key("10.1.2.3", ["198.51.100.9, 10.0.0.2"]) == "198.51.100.0/24"
    with pytest.raises(sds.InvalidArgument, match="at most 32"):
        _native.ClientAddress(300, 64)
