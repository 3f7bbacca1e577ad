"""The protocol error classes: real class statements, with the names, kinds and messages the
bindings, the cassettes (`error: TaskNotFound`) and client code rely on."""

from __future__ import annotations

import inspect

import pytest

from mockagent import errors

# public name → (class __name__, kind, default message), in ERROR_KINDS order
CLASSES = {
    "ParseError": ("ParseError", "Parse", "Invalid JSON payload"),
    "InvalidRequest": ("InvalidRequestError", "InvalidRequest", "Request payload validation error"),
    "MethodNotFound": ("MethodNotFoundError", "MethodNotFound", "Method not found"),
    "InvalidParams": ("InvalidParamsError", "InvalidParams", "Invalid parameters"),
    "InternalError": ("InternalError", "Internal", "Internal error"),
    "TaskNotFound": ("TaskNotFoundError", "TaskNotFound", "Task not found"),
    "TaskNotCancelable": ("TaskNotCancelableError", "TaskNotCancelable", "Task cannot be canceled"),
    "PushNotificationNotSupported": (
        "PushNotificationNotSupportedError",
        "PushNotificationNotSupported",
        "Push Notification is not supported",
    ),
    "UnsupportedOperation": (
        "UnsupportedOperationError",
        "UnsupportedOperation",
        "This operation is not supported",
    ),
    "ContentTypeNotSupported": (
        "ContentTypeNotSupportedError",
        "ContentTypeNotSupported",
        "Incompatible content types",
    ),
    "InvalidAgentResponse": (
        "InvalidAgentResponseError",
        "InvalidAgentResponse",
        "Invalid agent response",
    ),
    "ExtendedAgentCardNotConfigured": (
        "ExtendedAgentCardNotConfiguredError",
        "ExtendedAgentCardNotConfigured",
        "Extended agent card is not configured",
    ),
    "ExtensionSupportRequired": (
        "ExtensionSupportRequiredError",
        "ExtensionSupportRequired",
        "Extension support is required",
    ),
    "VersionNotSupported": (
        "VersionNotSupportedError",
        "VersionNotSupported",
        "This protocol version is not supported",
    ),
}


@pytest.mark.parametrize("public", CLASSES)
def test_each_error_keeps_its_name_kind_and_message(public):
    cls = getattr(errors, public)
    name, kind, message = CLASSES[public]
    assert (cls.__name__, cls.__qualname__, cls.__module__) == (name, name, "mockagent.errors")
    assert cls.__bases__ == (errors.ProtocolError,)
    assert (cls.kind, cls.default_message) == (kind, message)
    raised = cls()
    assert (str(raised), raised.message) == (message, message)
    assert (raised.metadata, raised.details, raised.http_status) == ({}, [], None)
    assert str(cls("Task t-1 not found")) == "Task t-1 not found"


def test_error_kinds_name_each_class_by_its_kind_in_order():
    assert list(errors.ERROR_KINDS) == [kind for _, kind, _ in CLASSES.values()]
    assert list(errors.ERROR_KINDS.values()) == [getattr(errors, public) for public in CLASSES]


@pytest.mark.parametrize("public", CLASSES)
def test_each_error_is_a_class_statement_editors_and_type_checkers_can_find(public):
    cls = getattr(errors, public)
    source = inspect.getsource(cls)  # OSError for a class made with type(): no statement to find
    assert source.startswith(f"class {cls.__name__}(ProtocolError):")
    assert getattr(errors, cls.__name__) is cls  # the class's own name is importable too
