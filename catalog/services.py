from django.db import transaction

from catalog.models import LookupSwitch, Product


class UnknownProduct(LookupError):
    pass


def product_set_paused(*, slug: str, paused: bool) -> Product:
    updated = Product.objects.filter(slug=slug).update(is_paused=paused)
    if not updated:
        raise UnknownProduct(slug)
    return Product.objects.get(slug=slug)


@transaction.atomic
def lookups_set_paused(*, paused: bool, reason: str = "") -> LookupSwitch:
    switch, _ = LookupSwitch.objects.select_for_update().get_or_create(pk=1)
    switch.paused = paused
    switch.reason = reason
    switch.save()
    return switch
