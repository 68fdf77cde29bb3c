from django.contrib import admin

from lookups.models import (
    BrowserCheckCount,
    BusinessListing,
    CarrierOverride,
    ExposureCoverage,
    ExposureRecord,
    NumberReport,
)


@admin.register(NumberReport)
class NumberReportAdmin(admin.ModelAdmin):
    list_display = ["e164", "category", "reported_at", "source"]
    list_filter = ["category", "source"]
    search_fields = ["=e164"]
    date_hierarchy = "reported_at"
    show_full_result_count = False


@admin.register(BusinessListing)
class BusinessListingAdmin(admin.ModelAdmin):
    list_display = ["name", "e164", "verified", "verified_at", "source"]
    list_filter = ["verified", "source"]
    search_fields = ["=e164", "name"]


@admin.register(ExposureRecord)
class ExposureRecordAdmin(admin.ModelAdmin):
    # Only hashes exist; staff can count and remove records but never read numbers.
    list_display = ["number_hash", "imported_at"]
    readonly_fields = ["number_hash", "imported_at"]
    show_full_result_count = False

    def has_add_permission(self, request):
        return False


@admin.register(ExposureCoverage)
class ExposureCoverageAdmin(admin.ModelAdmin):
    list_display = ["region", "updated_at"]


@admin.register(CarrierOverride)
class CarrierOverrideAdmin(admin.ModelAdmin):
    list_display = ["e164", "operator_name", "note", "updated_at"]
    search_fields = ["=e164", "operator_name"]


@admin.register(BrowserCheckCount)
class BrowserCheckCountAdmin(admin.ModelAdmin):
    # Written by the checker route only; staff read the counts.
    list_display = ["day", "product", "checks"]
    list_filter = ["product"]
    date_hierarchy = "day"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
