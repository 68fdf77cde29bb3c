import pytest

from accounts import crypto


@pytest.mark.django_db(transaction=True)
def test_database_dump_after_creating_keys_contains_no_raw_key(
    make_key, client, bearer, dump_database
):
    issued = [make_key() for _ in range(3)]
    for _, raw in issued:
        assert client.get("/v1/data/account", **bearer(raw)).status_code == 200
    dump = dump_database()
    for key, raw in issued:
        assert key.key_hash in dump  # the dump is real and holds the key rows
        assert raw not in dump
        assert raw[len(crypto.PREFIX) :] not in dump  # nor the secret part alone
        assert crypto.display_prefix(raw) in dump  # only the display prefix
