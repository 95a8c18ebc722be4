"""`{% once_field %}`: a form's one-time token (timekeeping.access.once)."""

from django import template
from django.utils.html import format_html

from timekeeping.access import once
from timekeeping.clocks.undo import UNDO_WINDOW_WORDS

OFFERED = "undo_offered"  # as timekeeping.console.controls keeps it in the session

register = template.Library()


@register.simple_tag
def once_field() -> str:
    return format_html('<input type="hidden" name="{}" value="{}">', once.FIELD, once.token())


@register.inclusion_tag("_undo.html", takes_context=True)
def undo_offered(context) -> dict:
    """The Undo an action offered on the page before (a plain form post, sent back here):
    shown once, then gone from the session."""
    request = context.get("request")
    offered = request.session.pop(OFFERED, None) if request is not None else None
    return {"offered": offered, "window": UNDO_WINDOW_WORDS,  # and back here after it
            "next": request.get_full_path() if request is not None else ""}
