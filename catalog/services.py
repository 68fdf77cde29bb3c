from django.db import transaction

from catalog.models import InterestSubmission, LookupSwitch, Product


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


def interest_submit(
    *, product: Product, email: str, name: str, company: str, use_case: str
) -> tuple[InterestSubmission, bool]:
    """Records interest in a planned product; a repeat from the same address updates it.

    Returns the submission and whether it is new. The unique constraint on (product, email)
    decides between two concurrent first submissions: `update_or_create` retries the loser
    as an update.
    """
    return InterestSubmission.objects.update_or_create(
        product=product,
        email=email.strip().lower(),
        defaults={"name": name, "company": company, "use_case": use_case},
    )
