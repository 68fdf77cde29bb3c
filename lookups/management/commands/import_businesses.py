from lookups.management.commands._import_command import ImportCommand


class Command(ImportCommand):
    help = (
        "Import business listings from CSV (phone,country,name,verified). A listing already "
        "present is updated; only verified listings are ever returned by lookups."
    )
    kind = "businesses"
    record_name = ("business listing", "business listings")
