import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "phoneintel.settings")
# A request waits at most this long for one statement (PostgreSQL's statement_timeout,
# settings.DATABASES): a web worker is never held by a stuck query. Commands such as
# migrate or the importers run without a limit unless the environment sets one.
os.environ.setdefault("DATABASE_STATEMENT_TIMEOUT_MS", "5000")

application = get_wsgi_application()
