"""The engine's answer JSON as a protobuf message without `json_format.ParseDict`, which walks
every field in Python: the JSON becomes the constructor's keyword arguments (nested dicts for
messages, enum names, dicts for Structs), and protobuf's C runtime builds the message at once.

Only the shapes an answer has in practice take this way: camelCase keys, values of exactly the
field's JSON type, Timestamps as RFC 3339 strings. Anything else (a null, a proto field name,
numbers as strings, a second member of a oneof, a map) is `Unfit`, and the caller parses
the whole answer with `json_format`, which stays the authority on what a shape means and which
error it is. tests/dialects/test_grpc_convert.py holds both ways equal over every bundled answer.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from google.protobuf import struct_pb2, timestamp_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor

Convert = Callable[[Any], Any]
Plan = dict[str, tuple[str, Convert, str | None]]
"""A message's fields by JSON name: (field name, how its JSON value converts, its oneof)."""


class Unfit(Exception):
    """A value this fast way leaves to `json_format`."""


def kwargs_of(value: Any, descriptor: Any) -> dict[str, Any]:
    """A message's JSON as its constructor's keyword arguments; Unfit when json_format must
    decide. Unknown keys are left out, as `ParseDict(ignore_unknown_fields=True)` does.
    `descriptor` is the message's Descriptor (upb's type or the pure-Python one)."""
    if type(value) is not dict:
        raise Unfit
    plan = _plan(descriptor)
    kwargs: dict[str, Any] = {}
    oneofs: set[str] | None = None
    for key, item in value.items():
        entry = plan.get(key)
        if entry is None:
            if key in descriptor.fields_by_name or key.startswith("["):
                raise Unfit  # a proto field name or an extension: json_format's to read
            continue
        name, convert, oneof = entry
        if item is None:
            raise Unfit  # null clears a field, or is a Value's null: json_format knows which
        if oneof is not None:
            oneofs = oneofs if oneofs is not None else set()
            if oneof in oneofs:
                raise Unfit  # two members of one oneof: json_format's error
            oneofs.add(oneof)
        kwargs[name] = convert(item)
    return kwargs


_plans: dict[str, Plan] = {}


def _plan(descriptor: Descriptor) -> Plan:
    plan = _plans.get(descriptor.full_name)
    if plan is None:
        plan = _plans[descriptor.full_name] = {}  # in place before the fields: types nest
        for field in descriptor.fields:
            oneof = field.containing_oneof
            plan[field.json_name] = (field.name, _converter(field), oneof.name if oneof else None)
    return plan


def _converter(field: FieldDescriptor) -> Convert:
    one = _scalar(field) if field.message_type is None else _message(field.message_type)
    if not field.is_repeated:
        return one
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        return _unfit

    def many(value: Any) -> list[Any]:
        if type(value) is not list or None in value:
            raise Unfit  # a null element is json_format's error
        return [one(item) for item in value]

    return many


def _message(descriptor: Descriptor) -> Convert:
    name = descriptor.full_name
    if name == "google.protobuf.Timestamp":
        return _timestamp
    if name == "google.protobuf.Struct":
        return _struct
    if name == "google.protobuf.Value":
        return _value
    if name.startswith("google.protobuf."):
        return _unfit  # Any, wrappers, durations: none in an answer of ours
    return lambda value: kwargs_of(value, descriptor)


_TYPES: dict[int, type] = {
    FieldDescriptor.CPPTYPE_STRING: str,
    FieldDescriptor.CPPTYPE_BOOL: bool,
    FieldDescriptor.CPPTYPE_INT32: int,
    FieldDescriptor.CPPTYPE_INT64: int,
    FieldDescriptor.CPPTYPE_UINT32: int,
    FieldDescriptor.CPPTYPE_UINT64: int,
}


def _scalar(field: FieldDescriptor) -> Convert:
    if field.type == FieldDescriptor.TYPE_BYTES:
        return _bytes
    if field.enum_type is not None:
        names = frozenset(field.enum_type.values_by_name)

        def enum(value: Any) -> Any:
            if type(value) is str and value in names:
                return value
            raise Unfit  # a number, or a name json_format may leave out

        return enum
    kind = _TYPES.get(field.cpp_type)
    if kind is None:
        return _unfit  # floats: json_format's "NaN" and range rules

    def exactly(value: Any) -> Any:
        if type(value) is kind:  # an int is no bool, a bool no int
            return value
        raise Unfit

    return exactly


def _bytes(value: Any) -> bytes:
    """Base64 as json_format reads it: either alphabet, padding optional (an error is Unfit)."""
    if type(value) is not str:
        raise Unfit
    encoded = value.encode("utf-8")
    return base64.urlsafe_b64decode(encoded + b"=" * (4 - len(encoded) % 4))


def _unfit(value: Any) -> Any:
    raise Unfit


@lru_cache(maxsize=4096)
def _seconds_nanos(text: str) -> tuple[int, int]:
    """A timestamp string parsed once: a GetTask answers the same status time again and again."""
    stamp = timestamp_pb2.Timestamp()
    try:
        stamp.FromJsonString(text)
    except ValueError:
        raise Unfit from None
    return stamp.seconds, stamp.nanos


def _timestamp(value: Any) -> timestamp_pb2.Timestamp:
    if type(value) is not str:
        raise Unfit
    seconds, nanos = _seconds_nanos(value)
    return timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos)


def _struct(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        raise Unfit
    return value  # protobuf makes a Struct of a dict itself


def _value(value: Any) -> struct_pb2.Value:
    holder = struct_pb2.Struct()
    holder.update({"v": value})
    return holder.fields["v"]
