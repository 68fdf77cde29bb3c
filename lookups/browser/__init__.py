"""The browser channel: public checker pages for the five phone products.

Separate from the API in every way that matters: its own route (`/checkers/<product>/checks`,
never under /v1/), its own protection layer (`protection.py`), answers only as encrypted
envelopes (`envelope.py`), and no developer key is ever read or charged (`checks.py`).
"""
