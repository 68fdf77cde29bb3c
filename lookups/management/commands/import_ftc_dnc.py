from lookups.management.commands._import_command import ImportCommand


class Command(ImportCommand):
    help = (
        "Import the FTC Do Not Call reported-calls CSV (DNC_Complaint_Numbers_*.csv) as number "
        "reports with source ftc-dnc. Consumer columns are never read."
    )
    kind = "ftc_dnc"
    record_name = ("report", "reports")
