from django.urls import path

from bulkjobs import views

app_name = "bulkjobs"

urlpatterns = [
    path("", views.bulk_job_list, name="list"),
    path("upload/", views.bulk_job_upload, name="upload"),
    path("progress.json", views.bulk_job_progress, name="progress"),
    path("<str:job_id>/results.<str:format>", views.bulk_job_results, name="results"),
    path("<str:job_id>/cancel/", views.bulk_job_cancel, name="cancel"),
]
