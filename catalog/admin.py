import csv

from django.contrib import admin
from django.http import HttpResponse
from django.utils import timezone

from catalog.models import InterestSubmission, LookupSwitch, Product


@admin.register(Product)
class ProductAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "availability", "channels", "unit_cost", "is_paused"]
    list_editable = ["is_paused"]
    list_filter = ["availability", "is_paused"]
    readonly_fields = ["slug"]

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(LookupSwitch)
class LookupSwitchAdmin(admin.ModelAdmin):
    list_display = ["__str__", "paused", "reason", "updated_at"]

    def has_add_permission(self, request):
        return not LookupSwitch.objects.exists()

    def has_delete_permission(self, request, obj=None):
        return False


CSV_COLUMNS = ["product", "email", "name", "company", "use_case", "created_at", "updated_at"]


def csv_cell(value) -> str:
    """Text a spreadsheet will not run: the public wrote it, staff will open it."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


@admin.register(InterestSubmission)
class InterestSubmissionAdmin(admin.ModelAdmin):
    list_display = ["email", "product", "name", "company", "updated_at"]
    list_filter = ["product"]
    search_fields = ["email", "name", "company"]
    readonly_fields = ["created_at", "updated_at"]
    list_select_related = ["product"]
    actions = ["export_csv"]

    @admin.action(description="Export selected submissions as CSV")
    def export_csv(self, request, queryset):
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="interest-{stamp}.csv"'
        writer = csv.writer(response)
        writer.writerow(CSV_COLUMNS)
        for submission in queryset.select_related("product").order_by("product__slug", "email"):
            writer.writerow(
                [
                    submission.product.slug,
                    *(
                        csv_cell(getattr(submission, field))
                        for field in ("email", "name", "company", "use_case")
                    ),
                    submission.created_at.isoformat(),
                    submission.updated_at.isoformat(),
                ]
            )
        return response
