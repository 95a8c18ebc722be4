"""A brand's API keys over the API: listed, made (the secret shown once) and revoked, by the
brand's owner only (docs/security.md)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.access import keys
from timekeeping.api.access import owned
from timekeeping.basics import wallclock
from timekeeping.models import ApiKey
from timekeeping.web.strict import StrictSerializer


class KeyOut(serializers.ModelSerializer):
    class Meta:
        model = ApiKey
        fields = ["id", "brand", "name", "created", "last_used", "revoked"]


class MadeKeyOut(KeyOut):
    secret = serializers.CharField(help_text="Shown this once: keep it now. Send it as "
                                             "`Authorization: Bearer <secret>`.")

    class Meta(KeyOut.Meta):
        fields = [*KeyOut.Meta.fields, "secret"]


class KeyIn(StrictSerializer):
    name = serializers.CharField(max_length=200, help_text="What the key is for.")


class KeyListOut(serializers.Serializer):
    keys = KeyOut(many=True)


class KeyList(APIView):
    @extend_schema(operation_id="keys_list", responses=KeyListOut)
    def get(self, request, brand_id: str):
        brand = owned(request, brand_id)
        return Response({"keys": KeyOut(brand.api_keys.all(), many=True).data})

    @extend_schema(operation_id="keys_create", request=KeyIn, responses={201: MadeKeyOut})
    def post(self, request, brand_id: str):
        brand = owned(request, brand_id)
        given = KeyIn(data=request.data)
        given.is_valid(raise_exception=True)
        made = keys.make(brand=brand, name=given.validated_data["name"], by=request.user,
                         now=wallclock.wall_now())
        body = KeyOut(made.key).data | {"secret": made.secret}
        return Response(body, status=status.HTTP_201_CREATED)


class KeyRevoke(APIView):
    @extend_schema(operation_id="keys_revoke", request=None, responses=KeyOut)
    def post(self, request, brand_id: str, key_id: str):
        brand = owned(request, brand_id)
        key = brand.api_keys.filter(pk=key_id).first()
        if key is None:
            raise NotFound(f"key: no key {key_id!r} of the brand")
        return Response(KeyOut(keys.revoke(key, now=wallclock.wall_now())).data)
