"""The URL of a URL-mode elicitation: which host a browser would really visit (what a UI
highlights), and whether this client offers to open it at all."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["split_url", "url_host", "url_problem"]


def split_url(url: str) -> tuple[str, str, str]:
    """(before the host, the host, after it): what a UI highlights. The host is the one a
    browser would go to (after any ``user@`` part); ("", "", url) when there is none."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return "", "", url
    if not host:
        return "", "", url
    netloc_at = url.find(parts.netloc)
    start = url.lower().find(host, netloc_at + parts.netloc.rfind("@") + 1)
    if netloc_at < 0 or start < 0:
        return "", "", url
    return url[:start], url[start : start + len(host)], url[start + len(host) :]


def url_host(url: str) -> str | None:
    return split_url(url)[1] or None


def url_problem(url: str) -> str | None:
    """Why this client will not offer to open ``url`` (not http or https), or None."""
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme not in ("http", "https") or url_host(url) is None:
        return "the URL is not a web address (http or https), so acp_notebook will not offer to open it"
    return None
