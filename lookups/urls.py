from django.urls import path

from lookups import views

app_name = "checkers"

urlpatterns = [
    path("", views.checker_index, name="index"),
    path("<slug:slug>/", views.checker_page, name="page"),
    path("<slug:slug>/checks", views.checker_check, name="check"),
]
