"""`{% once_field %}`: a form's one-time token (timekeeping.once)."""

from django import template
from django.utils.html import format_html

from timekeeping import once

register = template.Library()


@register.simple_tag
def once_field() -> str:
    return format_html('<input type="hidden" name="{}" value="{}">', once.FIELD, once.token())
