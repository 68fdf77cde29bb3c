"""The portal's Bulk jobs page: upload a list, follow each job, download results, cancel.

The upload goes through the API's own steps for a list (`bulkjobs.files`, the key's
product restriction, the sandbox's triggers, `bulk_job_submit`); progress is polled by
`static/js/bulk-jobs.js` from `progress.json`, so the page updates without a reload.
"""

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from accounts.membership import member_required
from accounts.models import Account, ApiKey
from accounts.roles import Action
from accounts.selectors.key_read import api_key_read
from bulkjobs import files
from bulkjobs.forms import BulkJobUploadForm
from bulkjobs.models import BulkJob
from bulkjobs.selectors import job_payload, result_csv, result_lines
from bulkjobs.services import (
    JobNotFound,
    bulk_job_delete,
    bulk_job_submit,
    sandbox_triggers_refuse,
)
from catalog.pause_check import refuse_if_paused
from lookups.bulk import BULK_SLUG
from lookups.products import PRODUCTS
from phoneintel.errors import ApiError

PAGE_SIZE = 50


def _keys(account: Account):
    return ApiKey.objects.filter(account=account).usable(timezone.now()).order_by("-created_at")


def _page(request, account: Account, *, form=None):
    jobs = BulkJob.objects.filter(account=account).select_related("api_key").order_by("-id")
    page = Paginator(jobs, PAGE_SIZE).get_page(request.GET.get("page"))
    now = timezone.now()
    return render(
        request,
        "bulkjobs/list.html",
        {
            "developer": account,
            "page": page,
            "jobs": [(job, _downloadable(job, now)) for job in page.object_list],
            "form": form or BulkJobUploadForm(keys=_keys(account)),
        },
    )


def _downloadable(job: BulkJob, now) -> bool:
    return job.status in (BulkJob.Status.SUCCEEDED, BulkJob.Status.FAILED) and (
        job.expires_at is None or job.expires_at > now
    )


@member_required(Action.VIEW_USAGE)
@never_cache
@require_GET
def bulk_job_list(request):
    return _page(request, request.account)


# Uploading spends a key's units, as its calls would: the keys' role.
@member_required(Action.MANAGE_KEYS)
@require_POST
def bulk_job_upload(request):
    account = request.account
    form = BulkJobUploadForm(request.POST, request.FILES, keys=_keys(account))
    if not form.is_valid():
        return _page(request, account, form=form)
    key: ApiKey = form.cleaned_data["key"]
    product = PRODUCTS[form.cleaned_data["product"]]
    now = timezone.now()
    api_key = api_key_read(key_hash=key.key_hash, now=now)
    if not api_key.restrictions.permits_product(product.value):
        form.add_error("product", f"The key {key.prefix}… may not use {product.value}.")
        return _page(request, account, form=form)
    try:  # the flags the API's upload asks: bulk jobs' own (its permission), the product's
        refuse_if_paused(api_key.pauses, BULK_SLUG)
        refuse_if_paused(api_key.pauses, product.value)
    except ApiError as refused:
        form.add_error("product", refused.message)
        return _page(request, account, form=form)
    uploaded = form.cleaned_data["file"]
    suffix = uploaded.name.rsplit(".", 1)[-1].lower()
    media = files.NDJSON if suffix in ("ndjson", "jsonl") else files.CSV
    try:
        upload = files.read_upload(
            uploaded.read(),
            media=media,
            chunk_size=settings.BULK_JOB_CHUNK_SIZE,
            max_items=settings.BULK_JOB_MAX_ITEMS,
        )
        if api_key.is_test:
            sandbox_triggers_refuse(upload=upload, api_key=api_key, idempotency_key=None)
        job, _ = bulk_job_submit(
            api_key=api_key,
            product=product,
            upload=upload,
            idempotency_key=form.cleaned_data["upload_id"],
            chunk_size=settings.BULK_JOB_CHUNK_SIZE,
            now=now,
        )
    except ApiError as refused:
        form.add_error("file", refused.message.removeprefix("The request body: "))
        return _page(request, account, form=form)
    messages.success(request, f"{job.pk}: {job.total:,} numbers queued.")
    return redirect("bulkjobs:list")


@member_required(Action.VIEW_USAGE)
@never_cache
@require_GET
def bulk_job_progress(request):
    """The account's jobs still moving (and those just finished), for the page's script."""
    account = request.account
    ids = [value for value in request.GET.get("ids", "").split(",") if value][:PAGE_SIZE]
    jobs = BulkJob.objects.filter(account=account, pk__in=ids)
    now = timezone.now()
    return JsonResponse(
        {"jobs": [job_payload(job) | {"downloadable": _downloadable(job, now)} for job in jobs]}
    )


def _own_job(request, job_id: str) -> BulkJob:
    job = BulkJob.objects.filter(account=request.account, pk=job_id).first()
    if job is None:
        raise Http404("No such bulk job.")
    return job


@member_required(Action.VIEW_USAGE)
@require_GET
def bulk_job_results(request, job_id: str, format: str):
    if format not in ("csv", "ndjson"):
        raise Http404("Results come as .csv or .ndjson.")
    job = _own_job(request, job_id)
    if not _downloadable(job, timezone.now()):
        raise Http404("These results are not there (not finished, deleted or expired).")
    if format == "csv":
        response = StreamingHttpResponse(result_csv(job), content_type="text/csv; charset=utf-8")
    else:
        response = StreamingHttpResponse(result_lines(job), content_type=files.NDJSON)
    response["Content-Disposition"] = f'attachment; filename="{job.pk}.{format}"'
    return response


@member_required(Action.MANAGE_KEYS)
@require_POST
def bulk_job_cancel(request, job_id: str):
    job = _own_job(request, job_id)
    try:
        bulk_job_delete(job_id=job.pk, account_id=job.account_id, mode=job.mode, now=timezone.now())
    except JobNotFound:
        raise Http404("No such bulk job.") from None
    done = "canceled, its data deleted" if not job.finished else "its data deleted"
    messages.success(request, f"{job.pk}: {done}.")
    return redirect("bulkjobs:list")
