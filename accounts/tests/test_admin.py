import pytest

from accounts.models import ApiKey

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client, django_user_model):
    staff = django_user_model.objects.create_superuser(email="admin@example.test", password="pw")
    client.force_login(staff)
    return client


def test_key_list_shows_owner_prefix_status_and_never_the_hash(staff_client, make_key):
    key, raw = make_key(email="owner@example.test")
    page = staff_client.get("/admin/accounts/apikey/").content.decode()
    assert "owner@example.test" in page and key.prefix in page and "active" in page
    detail = staff_client.get(f"/admin/accounts/apikey/{key.pk}/change/").content.decode()
    assert key.key_hash not in page and key.key_hash not in detail
    assert raw not in detail


@pytest.mark.parametrize(
    ("action", "code"), [("revoke", "revoked_api_key"), ("deactivate", "inactive_api_key")]
)
def test_admin_actions_take_effect_on_the_next_request(
    staff_client, client, make_key, bearer, action, code
):
    key, raw = make_key()
    response = staff_client.post(
        "/admin/accounts/apikey/", {"action": action, "_selected_action": [key.pk]}, follow=True
    )
    assert response.status_code == 200
    staff_client.logout()
    answer = client.get("/v1/data/account", **bearer(raw))
    assert answer.status_code == 401 and answer.json()["error"]["code"] == code
    from django.contrib.admin.models import LogEntry

    assert LogEntry.objects.filter(object_id=str(key.pk)).exists()


def test_staff_edit_quota_and_rate_limit_but_not_a_later_expiry(staff_client, make_key, bearer):
    key, _ = make_key()
    url = f"/admin/accounts/apikey/{key.pk}/change/"
    later = key.created_at.replace(microsecond=0) + __import__("datetime").timedelta(days=120)
    form = {
        "name": key.name,
        "expires_at_0": later.strftime("%Y-%m-%d"),
        "expires_at_1": later.strftime("%H:%M:%S"),
        "is_active": "on",
        "monthly_quota": "77",
        "rate_limit": "30/m",
    }
    refused = staff_client.post(url, form)
    assert refused.status_code == 200
    assert "90 days" in refused.content.decode()
    key.refresh_from_db()
    assert key.monthly_quota == 1000
    earlier = key.expires_at - __import__("datetime").timedelta(days=30)
    form.update(
        expires_at_0=earlier.strftime("%Y-%m-%d"), expires_at_1=earlier.strftime("%H:%M:%S")
    )
    assert staff_client.post(url, form).status_code == 302
    key.refresh_from_db()
    assert (key.monthly_quota, key.rate_limit) == (77, "30/m")
    assert key.expires_at.replace(microsecond=0) == earlier.replace(microsecond=0)


def test_admin_cannot_add_or_delete_keys(staff_client):
    assert staff_client.get("/admin/accounts/apikey/add/").status_code == 403
    assert ApiKey.objects.count() == 0


def test_staff_see_this_months_units_by_product(staff_client, client, make_key, bearer):
    key, raw = make_key(email="split@example.test")
    for path in ["phone-risk-checks", "phone-risk-checks", "carrier-lookups"]:
        answer = client.post(
            f"/v1/data/{path}", {"phone": "+14155550123"}, content_type="application/json",
            **bearer(raw),
        )  # fmt: skip
        assert answer.status_code == 200
    page = staff_client.get("/admin/accounts/monthlyusage/").content.decode()
    assert key.prefix in page
    assert "carrier-lookup: 1, phone-risk: 2" in page
