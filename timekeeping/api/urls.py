"""The REST API under /api/ (DESIGN decision 11). Endpoints arrive with their features."""

urlpatterns: list = []
