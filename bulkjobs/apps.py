from django.apps import AppConfig


class BulkJobsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "bulkjobs"
    verbose_name = "Bulk jobs"
