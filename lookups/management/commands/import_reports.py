from lookups.management.commands._import_command import ImportCommand


class Command(ImportCommand):
    help = (
        "Import number reports from CSV (phone,country,category,reported_at,source). "
        "Bad rows are reported by line and skipped; running a file twice adds nothing."
    )
    kind = "reports"
    record_name = ("report", "reports")
