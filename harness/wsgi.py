"""One request through Django's WSGI handler in this process, as a server would send it.

`bench/cpu.py` and `bench/instructions.py` time requests this way, with no HTTP server in
between.
"""

import io
import sys


def serve(handler, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> str:
    """The status line of `handler`'s answer, once its after-response work has run."""
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
        # As behind the proxy that terminates TLS, so no HTTPS redirect.
        "HTTP_X_FORWARDED_PROTO": "https",
    }
    for name, value in headers.items():
        key = name.upper().replace("-", "_")
        environ[key if key == "CONTENT_TYPE" else f"HTTP_{key}"] = value
    answer = {}
    chunks = handler(environ, lambda status, headers, exc_info=None: answer.update(s=status))
    b"".join(chunks)
    chunks.close()  # runs the after-response work, as a server does
    return answer["s"]
