"""The bulk jobs' part of the OpenAPI document that drf-spectacular's decorators cannot say:
the `Location` header of an accepted upload."""

LOCATION_HEADER = {
    "description": "The job's address, `/v1/data/bulk-jobs/{job_id}`.",
    "required": True,
    "schema": {"type": "string"},
}


def bulk_jobs_section(result, generator, request, public):
    """Postprocessing hook: the upload's 202 names its `Location`."""
    upload = result.get("paths", {}).get("/v1/data/bulk-jobs", {}).get("post")
    if upload is not None:
        upload["responses"]["202"].setdefault("headers", {})["Location"] = LOCATION_HEADER
    return result
