"""The id factory mints exactly uuid5(namespace(seed), n)."""

import uuid

from mockagent.engine.ids import IdFactory


def test_ids_are_uuid5_of_the_seed_and_a_counter():
    ids = IdFactory("code-reviewer")
    namespace = uuid.uuid5(uuid.NAMESPACE_URL, "mockagent:code-reviewer")
    assert [ids.new() for _ in range(1000)] == [
        str(uuid.uuid5(namespace, str(n))) for n in range(1, 1001)
    ]
    assert ids.count == 1000
