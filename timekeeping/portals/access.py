"""Who reaches which portal page: a customer sees the subjects linked to their account, and a
subject of anyone else answers 404, exactly as one that does not exist."""

from __future__ import annotations

from django.http import Http404

from timekeeping.models import Subject


def subjects_of(request):
    """The subjects the signed-in customer may see, across the brands they are a customer of."""
    return Subject.objects.filter(customers__user=request.user).select_related("brand")


def subject_of(request, subject_id: str) -> Subject:
    subject = subjects_of(request).filter(pk=subject_id).first()
    if subject is None:
        raise Http404("no such subject")
    return subject
