"""gRPC messages to and from the engine's JSON without json_format, which walks every field in
pure Python.

Answers: the JSON becomes the generated class's keyword arguments (nested dicts for messages,
enum names, dicts for Structs, parsed Timestamps), and protobuf's C runtime builds the message
at once. Only the shapes an answer has in practice take this way: camelCase keys, values of
exactly the field's JSON type. Anything else (a null, a proto field name, numbers as strings, a
second member of a oneof, a map) is `Unfit`, and the caller parses the whole answer with
`json_format`, which stays the authority on what a shape means and which error it is.

Requests: `json_of` reads the set fields (`ListFields()`) as `MessageToDict` prints them, and
leaves maps, floats and unnamed enum numbers to it. tests/dialects/test_grpc_convert.py holds
both ways equal to json_format's.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from google.protobuf import json_format, struct_pb2, timestamp_pb2
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


def json_of(message: Any) -> dict[str, Any]:
    """A request message as `json_format.MessageToDict` gives it (camelCase, set fields only,
    enums by name, 64-bit integers as strings), without its field-by-field Python walk; Unfit
    for what it leaves to json_format (maps, floats, extensions, unnamed enum numbers)."""
    return {field.json_name: _writer(field)(value) for field, value in message.ListFields()}


_writers: dict[Any, Convert] = {}


def _writer(field: Any) -> Convert:
    write = _writers.get(field)
    if write is None:
        write = _writers[field] = _new_writer(field)
    return write


def _new_writer(field: FieldDescriptor) -> Convert:
    if field.is_extension:
        return _unfit
    one = _scalar_json(field) if field.message_type is None else _message_json(field.message_type)
    if not field.is_repeated:
        return one
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        return _unfit
    return lambda values: [one(value) for value in values]


def _message_json(descriptor: Descriptor) -> Convert:
    name = descriptor.full_name
    if name == "google.protobuf.Timestamp":
        return lambda value: value.ToJsonString()
    if name in ("google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"):
        return json_format.MessageToDict  # rare in a request: json_format's own rules
    if name.startswith("google.protobuf."):
        return _unfit
    return json_of


_INT64 = frozenset({FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_UINT64})


def _scalar_json(field: FieldDescriptor) -> Convert:
    if field.type == FieldDescriptor.TYPE_BYTES:
        return lambda value: base64.b64encode(value).decode("utf-8")
    if field.enum_type is not None:
        names = {number: value.name for number, value in field.enum_type.values_by_number.items()}

        def enum(value: Any) -> Any:
            name = names.get(value)
            if name is None:
                raise Unfit  # a number no name has: json_format's rules
            return name

        return enum
    if field.cpp_type in _INT64:
        return str
    if field.cpp_type in _TYPES:
        return _same
    return _unfit  # floats: json_format's shortest repr, NaN and Infinity


def _same(value: Any) -> Any:
    return value
