"""The bulk jobs' endpoints: upload a list, list and read jobs, stream results, delete.

DRF's steps admit each request as for every keyed endpoint: the key's one read, its
restrictions (an upload asks for its `product`, so a key limited to other products is
403 before the file is read), the pause flags (an upload is a bulk call: the bulk flag and
its product's), the rate (an upload counts as one request). An upload is read whole (at
most 8 MiB: its own body limit, `API_BODY_LIMITS`), checked, stored sealed and queued in
one transaction (`bulkjobs.services.bulk_job_submit`); nothing is charged until a worker
answers a chunk. Every read here is free.
"""

from django.conf import settings
from django.http import StreamingHttpResponse
from django.urls import path
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.views import APIView

from accounts.permissions import RequestedProduct
from bulkjobs import files
from bulkjobs.models import BulkJob
from bulkjobs.selectors import job_for, job_payload, jobs_page, result_csv, result_lines
from bulkjobs.services import (
    JobNotFound,
    bulk_job_delete,
    bulk_job_submit,
    sandbox_triggers_refuse,
)
from catalog.pause_check import refuse_if_paused
from lookups.api import idempotency_parameter
from lookups.bulk import BULK_SLUG
from lookups.idempotency import idempotency_key
from lookups.products import PRODUCTS
from phoneintel.envelope import success
from phoneintel.errors import ApiError, ErrorCode
from phoneintel.openapi import (
    AUTHENTICATED_ERROR_STATUSES,
    ErrorEnvelope,
    envelope,
    error_responses,
    register_error_examples,
    register_operation_codes,
    register_operation_only_codes,
)
from phoneintel.query import checked_query

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
JOB_ID_PATTERN = r"^job_[0-9A-HJKMNP-TV-Z]{26}$"


def not_finished() -> ApiError:
    return ApiError.retry_later(
        ErrorCode.BULK_JOB_NOT_FINISHED,
        "The job has not finished: its results are there once `status` is succeeded or"
        " failed. Ask again later.",
        5,
    )


def expired() -> ApiError:
    return ApiError(
        ErrorCode.BULK_JOB_EXPIRED,
        "The job's results are gone: they are deleted 24 hours after it finished, or when it"
        " is deleted.",
    )


def job_not_found() -> ApiError:
    return ApiError(ErrorCode.NOT_FOUND, "No such bulk job.")


register_error_examples(
    {ErrorCode.BULK_JOB_NOT_FINISHED: not_finished, ErrorCode.BULK_JOB_EXPIRED: expired}
)
register_operation_only_codes(
    {
        ErrorCode.BULK_JOB_NOT_FINISHED: {"getBulkJobResults"},
        ErrorCode.BULK_JOB_EXPIRED: {"getBulkJobResults"},
    }
)
# The results answer 409 only while the job runs; an upload never waits on its key (racing
# uploads of one key meet at the job's unique key), so its 409 is a conflict only.
register_operation_codes("getBulkJobResults", {409: {ErrorCode.BULK_JOB_NOT_FINISHED}})
register_operation_codes("createBulkJob", {409: {ErrorCode.IDEMPOTENCY_CONFLICT}})
_JOB_404 = {404: "No such bulk job of this key's account and mode (or no such endpoint)."}

# --- OpenAPI -----------------------------------------------------------------

_MOMENT = {"allow_null": True}
BulkJobData = inline_serializer(
    "BulkJob",
    {
        "id": serializers.RegexField(JOB_ID_PATTERN, help_text="`job_` and 26 characters."),
        "product": serializers.ChoiceField(choices=list(PRODUCTS)),
        "status": serializers.ChoiceField(
            choices=BulkJob.Status.values,
            help_text="`queued`, then `running` while workers answer its chunks, then"
            " `succeeded` (every item answered, errors inline), `failed` (its key stopped"
            " working: the rest are answered with the key's error, uncharged) or `canceled`.",
        ),
        "total": serializers.IntegerField(min_value=1, help_text="Rows in the file."),
        "processed": serializers.IntegerField(min_value=0, help_text="Items answered so far."),
        "charged": serializers.IntegerField(min_value=0, help_text="Units charged so far."),
        "itemErrors": serializers.IntegerField(
            min_value=0,
            help_text="Items answered with an error (`invalid_phone`, `validation_error`,"
            " `test_number_required`, `quota_exceeded`), none charged.",
        ),
        "createdAt": serializers.DateTimeField(),
        "startedAt": serializers.DateTimeField(**_MOMENT),
        "finishedAt": serializers.DateTimeField(**_MOMENT),
        "expiresAt": serializers.DateTimeField(
            **_MOMENT,
            help_text="When the input and results are deleted: 24 hours after the job"
            " finished; null before.",
        ),
    },
)
BulkJobResponse = envelope("BulkJobResponse", BulkJobData)
BulkJobsResponse = envelope(
    "BulkJobsResponse",
    inline_serializer(
        "BulkJobsPage",
        {
            "items": serializers.ListField(
                child=BulkJobData, max_length=MAX_LIMIT, help_text="Newest first."
            ),
            "hasMore": serializers.BooleanField(
                help_text="Whether older jobs follow: ask again with `startingAfter` set to the"
                " last item's `id`."
            ),
        },
    ),
)

_USAGE_EXAMPLE = {
    "period": "2026-11",
    "unitsUsed": 800,
    "unitsQuota": 100000,
    "unitsRemaining": 99200,
    "resetsAt": "2026-12-01T00:00:00Z",
}
JOB_EXAMPLE = {
    "id": "job_01JD8ZKQ4T7W3R5V9X2Y6B1C0D",
    "product": "carrier-lookup",
    "status": "running",
    "total": 100000,
    "processed": 42000,
    "charged": 41873,
    "itemErrors": 127,
    "createdAt": "2026-11-22T08:15:04Z",
    "startedAt": "2026-11-22T08:15:05Z",
    "finishedAt": None,
    "expiresAt": None,
}


def _example(name: str, data, *, status: int = 200) -> OpenApiExample:
    meta = {
        "requestId": "req_3f2a9c1e8b7d4f60a1b2c3d4e5f60718",
        "mode": "live",
        "unitsCharged": 0,
        "usage": _USAGE_EXAMPLE,
    }
    return OpenApiExample(
        name, value={"data": data, "meta": meta}, response_only=True, status_codes=[status]
    )


_JOB_ID_PARAMETER = OpenApiParameter(
    "job_id",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    pattern=JOB_ID_PATTERN,
    description="The job.",
)
_UPLOAD_413 = OpenApiResponse(
    ErrorEnvelope,
    description="The file is over 8 MiB (this endpoint's own limit). Nothing is stored or charged.",
)

UPLOAD_DESCRIPTION = (
    "Uploads a list of up to 100,000 numbers to be answered with one product on our workers."
    " The body is the file: `text/csv` with a header row naming `phone` and optionally"
    " `country` (UTF-8, a BOM allowed; other columns are ignored; an empty `country` means"
    ' none) or `application/x-ndjson` (one `{"phone", "country"?}` per line), at most 8 MiB.'
    " The file is checked before anything is stored: another content type, text that is not"
    " UTF-8, no `phone` column, a line that is not JSON, no rows or more than 100,000 are 422;"
    " a body over 8 MiB is 413. Nothing is charged then.\n\n"
    "The answer is 202 with the job and its `Location`. Items are answered in chunks, in"
    " order, each checked on its own as a bulk item (`invalid_phone`, `validation_error`,"
    " uncharged) and charged 1 unit as a lookup is, exactly once. When the key's quota or the"
    " account's allowance runs out, the remaining items are answered `quota_exceeded`,"
    " uncharged, and the job still succeeds. Poll the job (or take the `bulk_job.succeeded`"
    " webhook), then download its results, kept 24 hours.\n\n"
    "The `Idempotency-Key` header is required: the same key with the same file answers the"
    " same job (`Idempotent-Replayed: true`); with another file, 409 `idempotency_conflict`."
    " A key restricted to other products is 403 `product_not_permitted` (`details[0].field`"
    " `product`). A test key answers from the test numbers; a trigger number in its file"
    " answers that error for the whole upload, as in a bulk call."
)


class JobsQuery(serializers.Serializer):
    limit = serializers.IntegerField(
        min_value=1,
        max_value=MAX_LIMIT,
        default=DEFAULT_LIMIT,
        help_text=f"Jobs per page, 1 to {MAX_LIMIT}.",
    )
    startingAfter = serializers.RegexField(  # the query parameter's own name
        JOB_ID_PATTERN,
        required=False,
        help_text="The `id` of the last job of the previous page.",
        error_messages={"invalid": "Give the id of a job, `job_` and 26 characters."},
    )


class ResultsQuery(serializers.Serializer):
    startingAfter = serializers.IntegerField(  # the query parameter's own name
        min_value=0,
        max_value=settings.BULK_JOB_MAX_ITEMS,
        required=False,
        help_text="The `index` of the last item you have: the results continue after it (a"
        " download picked up where it stopped; CSV then without its header row).",
    )


class UploadQuery(serializers.Serializer):
    product = serializers.ChoiceField(
        choices=list(PRODUCTS), help_text="The product every number of the list is run on."
    )


def _answer(request, job: BulkJob, *, status: int = 200):
    return _success(request, job_payload(job), status=status)


def _success(request, data, *, status: int = 200):
    """Free answers to the key: no unit charged, the month as the key's read found it."""
    api_key = request.auth
    return success(
        request,
        data,
        units_charged=0,
        usage=api_key.month_usage.as_meta(),
        mode=api_key.mode,
        status=status,
    )


class BulkJobsView(APIView):
    """`GET` the list, `POST` an upload."""

    @property
    def product_slug(self) -> str | None:  # the pause permission's: an upload is a bulk call
        return BULK_SLUG if self.request.method == "POST" else None

    def requested_product(self, request) -> RequestedProduct | None:
        """An upload's `product`, for the key's restriction; None when absent or unknown (the
        view then answers 422)."""
        if request.method != "POST":
            return None
        product = request.query_params.get("product")
        if product in PRODUCTS:
            return RequestedProduct(product, field="product")
        return None

    @extend_schema(
        operation_id="listBulkJobs",
        summary="Your bulk jobs",
        description="The key's account's bulk jobs in the key's mode, newest first. Page with"
        " `limit` and `startingAfter` (the last `id` you read) while `hasMore` is true. Any"
        " other query parameter, or a value not described here, is 422 `validation_error`"
        " naming the parameter. Free.",
        tags=["Bulk jobs"],
        parameters=[JobsQuery],
        responses={200: BulkJobsResponse} | error_responses(*AUTHENTICATED_ERROR_STATUSES),
        examples=[_example("Jobs", {"items": [JOB_EXAMPLE], "hasMore": False})],
    )
    def get(self, request):
        api_key = request.auth
        query = checked_query(request.query_params, JobsQuery)
        page = jobs_page(
            account_id=api_key.account_id,
            mode=api_key.mode,
            limit=query["limit"],
            starting_after=query.get("startingAfter"),
        )
        data = {"items": [job_payload(job) for job in page.items], "hasMore": page.has_more}
        return _success(request, data)

    @extend_schema(
        operation_id="createBulkJob",
        summary="Bulk job: upload a list of up to 100,000 numbers",
        description=UPLOAD_DESCRIPTION,
        tags=["Bulk jobs"],
        parameters=[
            UploadQuery,
            idempotency_parameter(
                required=True,
                kept=". The same key with the same file answers the same job as it stands"
                " now (`Idempotent-Replayed: true`) and queues nothing more, for as long as"
                " the job is kept (its results are deleted 24 hours after it finishes); with"
                " another file, 409 `idempotency_conflict`.",
            ),
        ],
        request={
            files.CSV: {"type": "string", "description": "`phone[,country]` rows, a header."},
            files.NDJSON: {"type": "string", "description": 'One `{"phone"}` per line.'},
        },
        responses={
            202: OpenApiResponse(BulkJobResponse, description="The job, queued."),
            413: _UPLOAD_413,
        }
        | {
            status: response
            for status, response in error_responses(
                *AUTHENTICATED_ERROR_STATUSES,
                409,
                descriptions={
                    409: "The Idempotency-Key was used with another file"
                    " (`idempotency_conflict`). Nothing is stored or charged."
                },
            ).items()
            if status != 413
        },
        examples=[
            _example(
                "Queued",
                JOB_EXAMPLE
                | {
                    "status": "queued",
                    "processed": 0,
                    "charged": 0,
                    "itemErrors": 0,
                    "startedAt": None,
                },
                status=202,
            )
        ],
    )
    def post(self, request):
        api_key = request.auth
        query = checked_query(request.query_params, UploadQuery)
        product = PRODUCTS[query["product"]]
        request.log_context["product"] = product.value
        refuse_if_paused(api_key.pauses, product.value)
        key = idempotency_key(request, required=True)
        media = files.media_type(request.content_type or "")
        upload = files.read_upload(
            request._request.read(),
            media=media,
            chunk_size=settings.BULK_JOB_CHUNK_SIZE,
            max_items=settings.BULK_JOB_MAX_ITEMS,
        )
        if api_key.is_test:
            sandbox_triggers_refuse(upload=upload, api_key=api_key, idempotency_key=key)
        job, created = bulk_job_submit(
            api_key=api_key,
            product=product,
            upload=upload,
            idempotency_key=key,
            chunk_size=settings.BULK_JOB_CHUNK_SIZE,
            now=timezone.now(),
        )
        response = _answer(request, job, status=202)
        response["Location"] = f"/v1/data/bulk-jobs/{job.pk}"
        if not created:
            response["Idempotent-Replayed"] = "true"
        return response


class BulkJobView(APIView):
    """`GET` one job, `DELETE` it (cancel and delete its input and results)."""

    @extend_schema(
        operation_id="getBulkJob",
        summary="A bulk job",
        description="The job and its progress. Another account's job, or one of the other"
        " mode, is 404. Free.",
        tags=["Bulk jobs"],
        parameters=[_JOB_ID_PARAMETER],
        responses={200: BulkJobResponse}
        | error_responses(*AUTHENTICATED_ERROR_STATUSES, descriptions=_JOB_404),
        examples=[_example("Running", JOB_EXAMPLE)],
    )
    def get(self, request, job_id: str):
        api_key = request.auth
        job = job_for(job_id=job_id, account_id=api_key.account_id, mode=api_key.mode)
        if job is None:
            raise job_not_found()
        return _answer(request, job)

    @extend_schema(
        operation_id="deleteBulkJob",
        summary="Cancel a bulk job and delete its data",
        description="Cancels the job if it has not finished (items already answered stay"
        " charged; the rest are not answered) and deletes its input and results at once."
        " Answers the job, `canceled` if it was still running. Doing it again changes"
        " nothing. Free.",
        tags=["Bulk jobs"],
        parameters=[_JOB_ID_PARAMETER],
        responses={200: BulkJobResponse}
        | error_responses(*AUTHENTICATED_ERROR_STATUSES, descriptions=_JOB_404),
        examples=[
            _example(
                "Canceled",
                JOB_EXAMPLE
                | {
                    "status": "canceled",
                    "finishedAt": "2026-11-22T08:16:00Z",
                    "expiresAt": "2026-11-22T08:16:00Z",
                },
            )
        ],
    )
    def delete(self, request, job_id: str):
        api_key = request.auth
        try:
            job = bulk_job_delete(
                job_id=job_id,
                account_id=api_key.account_id,
                mode=api_key.mode,
                now=timezone.now(),
            )
        except JobNotFound:
            raise job_not_found() from None
        return _answer(request, job)


class BulkJobResultsView(APIView):
    """The results, streamed, in input order."""

    @extend_schema(
        operation_id="getBulkJobResults",
        summary="A bulk job's results",
        description="Every item in input order, streamed: NDJSON by default, one"
        ' `{"index", "data"}` (the product\'s result, as a bulk item) or `{"index", "error":'
        ' {"code", "message"}}` per line; with `Accept: text/csv`, CSV with a header row:'
        " `index`, the product's fields flattened (`risk.score`; a list space-separated),"
        " `errorMessage` and `errorCode`. There once the job has finished (409"
        " `bulk_job_not_finished` before), until `expiresAt` (410 `bulk_job_expired` after, or"
        " once deleted). Free.",
        tags=["Bulk jobs"],
        parameters=[_JOB_ID_PARAMETER, ResultsQuery],
        responses={
            (200, files.NDJSON): OpenApiResponse(
                {"type": "string", "description": "NDJSON lines"}, description="The results."
            ),
            (200, files.CSV): OpenApiResponse({"type": "string"}, description="The results."),
        }
        | error_responses(
            *AUTHENTICATED_ERROR_STATUSES,
            409,
            410,
            descriptions=_JOB_404
            | {
                409: "The job has not finished (`bulk_job_not_finished`): ask again after"
                " `Retry-After` seconds."
            },
        ),
        examples=[
            OpenApiExample(
                "NDJSON",
                value='{"index":0,"data":{"phoneNumber":"+447912345678","found":true,'
                '"carrier":{"operatorName":"O2","numberType":"mobile","country":"GB"}}}\n'
                '{"index":1,"error":{"code":"invalid_phone","message":"/1/phone: Not a'
                ' possible phone number."}}\n',
                media_type=files.NDJSON,
                response_only=True,
            ),
            OpenApiExample(
                "CSV",
                value="index,phoneNumber,found,carrier.operatorName,carrier.numberType,"
                "carrier.country,errorMessage,errorCode\n"
                "0,+447912345678,true,O2,mobile,GB,,\n"
                "1,,,,,,/1/phone: Not a possible phone number.,invalid_phone\n",
                media_type=files.CSV,
                response_only=True,
            ),
        ],
    )
    def get(self, request, job_id: str):
        api_key = request.auth
        after = checked_query(request.query_params, ResultsQuery).get("startingAfter", -1)
        job = job_for(job_id=job_id, account_id=api_key.account_id, mode=api_key.mode)
        if job is None:
            raise job_not_found()
        if not job.finished:
            raise not_finished()
        if job.status == BulkJob.Status.CANCELED or job.expires_at <= timezone.now():
            raise expired()
        if files.CSV in request.META.get("HTTP_ACCEPT", ""):
            stream, content_type = result_csv(job, after=after), "text/csv; charset=utf-8"
        else:
            stream, content_type = result_lines(job, after=after), files.NDJSON
        response = StreamingHttpResponse(stream, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{job.pk}.{_suffix(content_type)}"'
        return response


def _suffix(content_type: str) -> str:
    return "csv" if content_type.startswith(files.CSV) else "ndjson"


def urlpatterns() -> list:
    return [
        path("bulk-jobs", BulkJobsView.as_view(), name="bulk-jobs"),
        path("bulk-jobs/<str:job_id>", BulkJobView.as_view(), name="bulk-job"),
        path("bulk-jobs/<str:job_id>/results", BulkJobResultsView.as_view()),
    ]
