from django.urls import path

from catalog import views

app_name = "catalog"

urlpatterns = [
    path("", views.home, name="home"),
    path("products/", views.product_list, name="list"),
    path("products/<slug:slug>/", views.product_overview, name="overview"),
    path("products/<slug:slug>/interest/", views.product_interest, name="interest"),
    path(
        "products/<slug:slug>/interest/sent/",
        views.product_interest_sent,
        name="interest_sent",
    ),
    path("docs/api/", views.api_reference, name="api_reference"),
    path("favicon.ico", views.favicon, name="favicon"),
]
