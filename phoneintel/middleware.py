"""Request plumbing: request ids, the body limit, and the content security policy."""

import io
import uuid

from csp.middleware import CSPMiddleware
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.wsgi import LimitedStream
from django.utils.module_loading import import_string

from phoneintel.envelope import error_response, is_api_path
from phoneintel.errors import payload_too_large


def new_request_id() -> str:
    return "req_" + uuid.uuid4().hex


class RequestContextMiddleware:
    """Gives each request an id and a place for headers and after-response work.

    `request.response_headers` lets inner layers (rate limiting, say) add headers
    to whatever response comes out, errors included. `request.after_response`
    callables run once the response has been sent to the client, so bookkeeping
    such as `last_used_at` stays off the request's critical path.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.request_id = new_request_id()
        request.response_headers = {}
        request.after_response = []
        request.log_context = {}  # what the request log line says (phoneintel/access_log.py)
        response = self.get_response(request)
        for name, value in request.response_headers.items():
            if name not in response:
                response[name] = value
        # A view may set its own id (an idempotent replay keeps the original one).
        if "X-Request-Id" not in response:
            response["X-Request-Id"] = request.request_id
        if is_api_path(request.path):
            if "Cache-Control" not in response:
                # Answers are per key and per moment (usage, results): no cache may keep
                # one. Only the public OpenAPI document says otherwise.
                response["Cache-Control"] = "no-store"
            if not response.streaming and "Content-Length" not in response:
                # CommonMiddleware's, which only the site's chain runs (SiteMiddleware).
                # Without it gunicorn sends an answer chunked: a third write for the
                # chunks' end, and a client cannot tell the length from the headers.
                response["Content-Length"] = str(len(response.content))
        # Django runs these from response.close(), which the WSGI server calls once the
        # response is sent; the test client calls it too, so tests see the same order.
        response._resource_closers.extend(request.after_response)
        return response


def api_body_limit(path: str) -> int:
    """The largest body an API path takes: API_MAX_BODY_BYTES, unless API_BODY_LIMITS gives
    the path one of its own (an upload of a whole list)."""
    return settings.API_BODY_LIMITS.get(path, settings.API_MAX_BODY_BYTES)


class ApiBodyLimitMiddleware:
    """Answers 413 for API bodies over the limit before anything parses them.

    A declared Content-Length is checked without reading. A chunked body has no
    length, so up to limit + 1 bytes are read here and handed on to Django as an
    ordinary body; this needs a server that ends the input stream at the end of
    the body (gunicorn sets `wsgi.input_terminated`).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if is_api_path(request.path):
            limit = api_body_limit(request.path)
            if self._too_large(request, limit):
                return error_response(request, payload_too_large(limit))
        return self.get_response(request)

    def _too_large(self, request, limit: int) -> bool:
        meta = request.META
        if "chunked" in meta.get("HTTP_TRANSFER_ENCODING", "").lower():
            if not meta.get("wsgi.input_terminated"):
                return False
            body = self._read_at_most(meta["wsgi.input"], limit + 1)
            if len(body) > limit:
                return True
            meta["CONTENT_LENGTH"] = str(len(body))
            request._stream = LimitedStream(io.BytesIO(body), len(body))
            return False
        try:
            return int(meta.get("CONTENT_LENGTH") or 0) > limit
        except ValueError:
            return False

    @staticmethod
    def _read_at_most(stream, size: int) -> bytes:
        parts, remaining = [], size
        while remaining > 0:
            chunk = stream.read(min(remaining, 8192))
            if not chunk:
                break
            parts.append(chunk)
            remaining -= len(chunk)
        return b"".join(parts)


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's policy for the site's pages; a fixed one for the API.

    JSON loads nothing and is framed by nobody, so API answers carry the strictest
    policy as a constant. django-csp would build its policy per response even for an
    excluded path (a measurable share of a short API request), so the API path skips
    it altogether.
    """

    API_POLICY = "default-src 'none'; frame-ancestors 'none'"

    def process_request(self, request):
        if not is_api_path(request.path):
            super().process_request(request)

    def process_response(self, request, response):
        if not is_api_path(request.path):
            return super().process_response(request, response)
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = self.API_POLICY
        return response


class SiteMiddleware:
    """`settings.SITE_MIDDLEWARE`, run for the website and skipped by `/v1/`.

    The API authenticates by key alone and sets no cookie, so sessions, CSRF,
    messages, the session user and static files are work it would pay for on
    every request and never use. This builds the site's middleware into a chain
    of its own, the way Django builds `MIDDLEWARE`, and sends only non-API
    requests through it. Their `process_view` hooks (CSRF's check) run from here.
    """

    def __init__(self, get_response):
        self.get_response = get_response
        self.view_hooks = []
        handler = get_response
        for path in reversed(settings.SITE_MIDDLEWARE):
            middleware = import_string(path)(handler)
            if hasattr(middleware, "process_exception") or hasattr(
                middleware, "process_template_response"
            ):
                raise ImproperlyConfigured(f"{path} needs hooks SiteMiddleware does not run.")
            if hasattr(middleware, "process_view"):
                self.view_hooks.insert(0, middleware.process_view)
            handler = middleware
        self.site = handler

    def __call__(self, request):
        if is_api_path(request.path):
            # CommonMiddleware's one check the API keeps: a Host outside ALLOWED_HOSTS is
            # refused (400) before any view could build a URL from it.
            request.get_host()
            return self.get_response(request)
        return self.site(request)

    def process_view(self, request, view, args, kwargs):
        if is_api_path(request.path):
            return None
        for hook in self.view_hooks:
            response = hook(request, view, args, kwargs)
            if response is not None:
                return response
        return None
