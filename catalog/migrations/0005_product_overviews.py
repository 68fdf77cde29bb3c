"""Overview texts of the 13 products. Self-contained: app code may change, this may not."""

from django.db import migrations

RISK_MODEL = (
    " The score grows with the number of reports, how recent and how serious they are"
    " (scam and fraud count most), the number type and exposure; one more report never"
    " lowers it."
)

TEXTS = {
    "phone-lookup": (
        "Send a phone number, in international form or in national form with a country, and"
        " get back how risky it is to answer or trust it, together with how many reports we"
        " hold on it." + RISK_MODEL,
        "The number in E.164, whether it was found, a risk score from 0 to 100 with its level (low, medium,"
        " high) and the number of reports on record.",
    ),
    "phone-risk": (
        "The same risk model as the phone lookup, for callers who need the verdict and not the"
        " report volume behind it." + RISK_MODEL,
        "The number in E.164, whether it was found, and a risk score from 0 to 100 with its level (low,"
        " medium, high).",
    ),
    "carrier-lookup": (
        "Which operator a number belongs to and what kind of line it is. Operators come from"
        " the numbering plan's original allocation, corrected by our staff for numbers we know"
        " were ported.",
        "The number in E.164, whether it was found, and the carrier: operator name, number type (mobile,"
        " fixed line, toll free, VoIP and so on) and the number's own country.",
    ),
    "reverse-phone-lookup": (
        "The business registered to a phone number, when that business has been verified."
        " Unverified listings are kept out of every answer, so a name you get is one we stand"
        " behind.",
        "The number in E.164, whether it was found, and the business: its name, marked verified. Without"
        " a verified business the answer is not found.",
    ),
    "phone-exposure": (
        "Whether a phone number appears in known exposure data. We keep only keyed hashes of"
        " exposed numbers, never the numbers themselves, and the answer is a yes or no and"
        " nothing more.",
        "Only whether the number is at risk (atRisk true or false), for a number in a region"
        " the exposure data covers; elsewhere a not-found answer.",
    ),
    "bulk-lookup": (
        "Up to 50 numbers for one of the five phone products in a single call. Each number is"
        " checked on its own: a bad one is answered inline and costs nothing, every other one"
        " costs 1 unit. The call needs an Idempotency-Key, so a retry never charges twice.",
        "The product and one item per input, in order, each with its result or an inline"
        " error naming the field.",
    ),
    "email-validation": (
        "Whether an email address can receive mail and how risky it looks: syntax, domain and"
        " mailbox checks, disposable and role addresses.",
        "",
    ),
    "ip-risk": (
        "How an IP address is used: residential or hosting, proxy or VPN exit, and its abuse"
        " history.",
        "",
    ),
    "company-enrichment": (
        "Firmographic facts for a company domain: legal name, industry, size and location.",
        "",
    ),
    "social-intelligence": (
        "Public social-profile signals for fraud review, such as whether an identity has a"
        " consistent presence over time.",
        "",
    ),
    "seo-intelligence": (
        "Search-visibility facts for a domain: indexed pages, rankings and their trend.",
        "",
    ),
    "transcription": (
        "Speech-to-text for recorded calls, with speakers separated.",
        "",
    ),
    "watchlists": (
        "Watch a list of phone numbers and be told when a fact about one changes: a new"
        " report, a new risk level, a carrier change.",
        "",
    ),
}


def fill(apps, schema_editor):
    Product = apps.get_model("catalog", "Product")
    for slug, (overview, returns) in TEXTS.items():
        Product.objects.filter(slug=slug).update(overview=overview, returns=returns)


class Migration(migrations.Migration):
    dependencies = [("catalog", "0004_overview_and_interest")]
    operations = [migrations.RunPython(fill, migrations.RunPython.noop)]
