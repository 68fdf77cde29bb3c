from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class CatalogConfig(AppConfig):
    name = "catalog"

    def ready(self):
        from catalog.models import LookupSwitch, Product
        from catalog.selectors import pauses_forget

        # A change to the pause flags made in this process takes effect here on the next
        # request (other processes: within PAUSE_FLAGS_MAX_AGE_SECONDS).
        for model in (Product, LookupSwitch):
            post_save.connect(pauses_forget, sender=model, dispatch_uid=f"pauses-{model}")
            post_delete.connect(pauses_forget, sender=model, dispatch_uid=f"pauses-{model}-del")
