import pytest

from phoneintel.tests.contract import Contract


@pytest.fixture
def contract(client):
    """The document as GET /v1/data/openapi.json serves it."""
    response = client.get("/v1/data/openapi.json")
    assert response.status_code == 200
    return Contract(response.json())
