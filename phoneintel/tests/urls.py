"""The real URLconf plus two probe endpoints that exercise the shared plumbing."""

from django.urls import path
from django.utils.decorators import method_decorator
from django_ratelimit.decorators import ratelimit
from rest_framework import serializers
from rest_framework.views import APIView

from phoneintel.api import success
from phoneintel.urls import urlpatterns as real_urlpatterns


class ProbeBody(serializers.Serializer):
    phone = serializers.CharField(max_length=64)
    items = serializers.ListField(child=serializers.DictField(), required=False)


class EchoProbe(APIView):
    def post(self, request):
        body = ProbeBody(data=request.data)
        body.is_valid(raise_exception=True)
        return success(request, body.validated_data, units_charged=0)


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


urlpatterns = [
    path("v1/probe/limited", RateLimitedProbe.as_view()),
    path("v1/probe/echo", EchoProbe.as_view()),
    path("v1/probe/fail", FailingProbe.as_view()),
    *real_urlpatterns,
]
