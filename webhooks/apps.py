from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"

    def ready(self):
        # Registers the delivery tasks in every process, so that `webhooks.queue` calling
        # them by name runs them as Celery would here (eagerly where tests ask for it).
        from webhooks import tasks  # noqa: F401
