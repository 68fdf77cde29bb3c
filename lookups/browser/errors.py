"""The checker route's refusals: clear JSON with a stable code, never a result.

Body: {"error": {"code", "message", "requestId", "details"?}}, the API's error shape, so one
reader handles both; the codes are the browser channel's own.
"""

from enum import StrEnum

from django.http import JsonResponse

from lookups.inputs import InputProblem


class CheckerErrorCode(StrEnum):
    INVALID_REQUEST = "invalid_request"
    FORBIDDEN_ORIGIN = "forbidden_origin"
    CHECKER_SESSION_REQUIRED = "checker_session_required"
    CSRF_FAILED = "csrf_failed"
    CHECKER_TOKEN_INVALID = "checker_token_invalid"  # noqa: S105  (a code, not a secret)
    CHECKER_TOKEN_EXPIRED = "checker_token_expired"  # noqa: S105
    PROOF_OF_WORK_INVALID = "proof_of_work_invalid"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    VALIDATION_ERROR = "validation_error"
    INVALID_PHONE = "invalid_phone"
    RATE_LIMITED = "rate_limited"
    SERVICE_UNAVAILABLE = "service_unavailable"


class CheckerRefused(Exception):
    def __init__(
        self,
        status: int,
        code: CheckerErrorCode,
        message: str,
        *,
        details: list[dict] | None = None,
        retry_after: int | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or []
        self.retry_after = retry_after

    @classmethod
    def forbidden(cls, code: CheckerErrorCode, message: str) -> "CheckerRefused":
        return cls(403, code, message)

    @classmethod
    def from_problems(cls, problems: list[InputProblem]) -> "CheckerRefused":
        return cls(
            422,
            CheckerErrorCode(problems[0].code),
            problems[0].summary,
            details=[problem.as_detail() for problem in problems],
        )

    def response(self, request) -> JsonResponse:
        body = {"code": str(self.code), "message": self.message, "requestId": request.request_id}
        if self.details:
            body["details"] = self.details
        response = JsonResponse({"error": body}, status=self.status)
        if self.retry_after is not None:
            response["Retry-After"] = str(max(1, int(self.retry_after)))
        if self.status == 405:
            response["Allow"] = "POST"
        response["Cache-Control"] = "no-store"
        return response
