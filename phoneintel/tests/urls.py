"""The real URLconf plus probe endpoints that exercise the shared plumbing."""

from django.db import InterfaceError, OperationalError
from django.urls import path
from django.utils.decorators import method_decorator
from django_ratelimit.decorators import ratelimit
from django_redis.exceptions import ConnectionInterrupted
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rest_framework import serializers
from rest_framework.permissions import BasePermission
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from phoneintel.envelope import success
from phoneintel.urls import handler400, handler404, handler500  # noqa: F401  (Django reads them here)
from phoneintel.urls import urlpatterns as real_urlpatterns


class ProbeBody(serializers.Serializer):
    phone = serializers.CharField(max_length=64)
    items = serializers.ListField(child=serializers.DictField(), required=False)


class EchoProbe(APIView):
    def post(self, request):
        body = ProbeBody(data=request.data)
        body.is_valid(raise_exception=True)
        return success(request, body.validated_data, units_charged=0)


class SaysNoWithoutACode(BasePermission):
    def has_permission(self, request, view):
        return False


class BareRefusalProbe(APIView):
    """A view whose extra permission refuses without an error code of the contract."""

    permission_classes = [*api_settings.DEFAULT_PERMISSION_CLASSES, SaysNoWithoutACode]

    def get(self, request):
        return success(request, {"ok": True})


class FailingProbe(APIView):
    def get(self, request):
        raise RuntimeError("internal detail that must never reach a client: /srv/secret.py")


@method_decorator(ratelimit(key="ip", rate="1/m", block=True), name="get")
class RateLimitedProbe(APIView):
    authentication_classes = []
    permission_classes = []
    throttle_classes = []

    def get(self, request):
        return success(request, {"ok": True})


def _interrupted() -> ConnectionInterrupted:
    try:
        raise ConnectionInterrupted(connection=None) from RedisConnectionError("Error 111")
    except ConnectionInterrupted as error:
        return error


# What Django, redis-py and django-redis raise when a store fails (tests/test_faults.py
# makes the real ones happen against gunicorn).
STORE_FAILURES = {
    "postgres-operational": lambda: OperationalError("connection refused +14155550123"),
    "postgres-interface": lambda: InterfaceError("connection already closed"),
    "redis-connection": lambda: RedisConnectionError("Error 111 connecting to 127.0.0.1:6379."),
    "redis-timeout": lambda: RedisTimeoutError("Timeout reading from socket"),
    "redis-interrupted": _interrupted,
}


class StoreFailureProbe(APIView):
    authentication_classes = []
    permission_classes = []
    throttle_classes = []

    def get(self, request, failure):
        raise STORE_FAILURES[failure]()


class StoreFailingMiddleware:
    """Fails as a store would for /v1/probe/middleware/<failure>, before any other layer."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        prefix = "/v1/probe/middleware/"
        if request.path.startswith(prefix):
            raise STORE_FAILURES[request.path.removeprefix(prefix)]()
        return self.get_response(request)


def store_failure_outside_drf(request, failure):
    """A plain Django view: its exception reaches Django's handler500, as a middleware's would."""
    raise STORE_FAILURES[failure]()


urlpatterns = [
    path("v1/probe/store/<str:failure>", StoreFailureProbe.as_view()),
    path("v1/probe/plain-store/<str:failure>", store_failure_outside_drf),
    path("v1/probe/limited", RateLimitedProbe.as_view()),
    path("v1/probe/echo", EchoProbe.as_view()),
    path("v1/probe/fail", FailingProbe.as_view()),
    path("v1/probe/bare-refusal", BareRefusalProbe.as_view()),
    *real_urlpatterns,
]
