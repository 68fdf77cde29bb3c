"""gunicorn's hooks for this project. gunicorn reads ./gunicorn.conf.py by itself when
started from the repository's root (`-c` names it from elsewhere)."""

API_PREFIX = "/v1/"


def pre_request(worker, req):
    """Closes the connection after an API request whose body may be answered unread.

    The API answers 413 before reading a body over its limit
    (phoneintel.middleware.ApiBodyLimitMiddleware). On a kept-alive connection the
    unread rest would stand where the next request should start: gunicorn drains up to
    64 KiB of it, then drops the connection it has just announced as kept alive, and a
    pooled client's next request on it fails. The application cannot ask for the close
    itself, since gunicorn ignores a Connection header from the application (it is
    hop-by-hop), so it is decided here from the headers: a declared length over the
    limit, or a chunked body, whose length nobody knows before reading it. The answer
    then says `Connection: close` and the client opens a fresh connection.
    """
    if not req.path.startswith(API_PREFIX):
        return
    from django.conf import settings

    for name, value in req.headers:
        chunked = name == "TRANSFER-ENCODING" and "chunked" in value.lower()
        declared = name == "CONTENT-LENGTH" and value.strip().isdigit()
        if chunked or (declared and int(value) > settings.API_MAX_BODY_BYTES):
            req.force_close()
