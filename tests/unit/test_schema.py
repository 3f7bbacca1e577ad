"""The cassette JSON Schema accepts exactly what the loader accepts.

The schema is generated from the loader's models (and their rules), and checked here with
`jsonschema`, the validator editors use, independently of pydantic: every bundled and documented
cassette passes both; a set of broken cassettes is refused by both; and documents made by
mutating the bundled cassettes get the same answer from both.
"""

from __future__ import annotations

import copy
import datetime
import json
import random
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from mockagent.cassette import json_schema, load_cassette
from mockagent.cassette.loader import SCHEMA_FILE
from mockagent.cassette.predicates import ARGUMENTS
from mockagent.cassette.schema import NOT_IN_SCHEMA
from mockagent.cli.main import main
from mockagent.engine.matchers import PREDICATES
from mockagent.errors import CassetteError
from tests.helpers.docs import blocks

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted(ROOT.glob("cassettes/**/*.yaml")) + sorted(ROOT.glob("bench/cassettes/*.yaml"))
HEAD = """\
version: 1
agent:
  name: tester
  description: A test agent.
  capabilities: {streaming: true}
  skills: [{id: s, name: S, description: A skill.}]
clock: {start: 2026-10-06T09:00:00Z}
interactions:
"""
AGENTEX_HEAD = """\
version: 1
protocol: agentex
agents: [{id: a1, name: helper}]
interactions:
"""


def readme_cassettes() -> list[str]:
    """The YAML blocks of README.md and docs/ that are cassettes (mappings with a `version`)."""
    return [b.text for b in blocks("yaml") if "version" in (yaml.safe_load(b.text) or {})]


def as_json(value: Any) -> Any:
    """YAML data as an editor sees it: a YAML timestamp is a string there."""
    if isinstance(value, dict):
        return {key: as_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_json(item) for item in value]
    return value.isoformat() if isinstance(value, datetime.date) else value


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = json.loads(json_schema())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def schema_errors(validator: Draft202012Validator, text: str) -> list[str]:
    return [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(as_json(yaml.safe_load(text)))
    ]


def loader_error(tmp_path: Path, text: str) -> str | None:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        load_cassette(path)
    except CassetteError as exc:
        return str(exc)
    return None


def with_interactions(interactions: str, head: str = HEAD) -> str:
    return head + textwrap.indent(textwrap.dedent(interactions).strip("\n"), "  ") + "\n"


# -- the schema itself -----------------------------------------------------------------------------


def test_the_committed_schema_is_what_mockagent_schema_prints() -> None:
    printed = CliRunner().invoke(main, ["schema"]).output
    assert (ROOT / "cassettes" / "schema.json").read_text(encoding="utf-8") == printed, (
        "cassettes/schema.json is stale: run `mockagent schema > cassettes/schema.json`"
    )
    # The copy installed with the package, which recorded cassettes point editors at.
    assert SCHEMA_FILE.read_text(encoding="utf-8") == printed, (
        "mockagent/cassette/schema.json is stale: "
        "run `mockagent schema > mockagent/cassette/schema.json`"
    )


KEYWORDS = {
    "$schema",
    "$ref",
    "$defs",
    "title",
    "description",
    "default",
    "examples",
    "type",
    "enum",
    "const",
    "properties",
    "additionalProperties",
    "required",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "pattern",
    "format",
    "minLength",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
}
SUBSCHEMA = {"items", "additionalProperties", "propertyNames", "not", "if", "then", "else"}


def schema_keywords(schema: Any) -> Iterator[str]:
    """Every keyword used anywhere in `schema`."""
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        yield key
        if key in ("properties", "$defs"):
            for sub in value.values():
                yield from schema_keywords(sub)
        elif key in SUBSCHEMA:
            yield from schema_keywords(value)
        elif key in ("anyOf", "oneOf", "allOf"):
            for sub in value:
                yield from schema_keywords(sub)


def test_the_schema_uses_only_json_schema_keywords() -> None:
    # pydantic writes a bound it cannot place as `ge`, which validators ignore: 0 steps would pass
    assert set(schema_keywords(json.loads(json_schema()))) - KEYWORDS == set()


def test_the_predicate_keywords_are_the_engines() -> None:
    assert set(ARGUMENTS) == set(PREDICATES)


# -- what both accept ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_bundled_cassette_is_valid_for_both(
    validator: Draft202012Validator, path: Path
) -> None:
    text = path.read_text(encoding="utf-8")
    assert schema_errors(validator, text) == []
    load_cassette(path)


def test_the_readme_cassettes_are_valid_for_both(
    validator: Draft202012Validator, tmp_path: Path
) -> None:
    blocks = readme_cassettes()
    assert len(blocks) >= 2  # the A2A example and the Agentex one
    for block in blocks:
        assert (schema_errors(validator, block), loader_error(tmp_path, block)) == ([], None), block


VALID = {
    "fault error by name (the docs')": """
        - name: broken-stream
          match: {operation: SendStreamingMessage}
          fault: {errorAfter: 2, error: InvalidAgentResponse}
          reply: {task: {steps: [{state: TASK_STATE_WORKING}]}}
    """,
    "reply error by name": "- {name: missing, reply: {error: TaskNotFound}}",
    "reply error as a mapping": "- {name: gone, reply: {error: {name: TaskNotFound, message: x}}}",
    "fault with a status only": "- {name: down, fault: {status: 503, body: busy}}",
    "state spellings": """
        - name: run
          reply:
            task:
              steps: [{state: submitted}, {state: RUNNING}, {state: input-required},
                      {state: TASK_STATE_COMPLETED}]
        - name: more
          match: {task: {state: INPUT_REQUIRED, from: run}}
          reply: {message: ok}
    """,
    "predicates": """
        - name: p
          match:
            text: {startswith: a, not: {endswith: b}}
            parts: {any: {mediaType: {in: [text/plain]}}, none: {}}
            where: {message.metadata: {startwith: a}, message.messageId: {exists: true}}
            headers: {x-api-key: {regex: "^k"}}
          reply: {message: {parts: [{text: hi}, {data: {a: 1}}], metadata: {m: 1}}}
    """,
    "whole numbers written as floats": "- {name: n, times: 2.0, reply: {message: hi}}",
    "how a stream opens": """
        - {name: a, reply: {task: {first: task, steps: [{state: working}]}}}
        - {name: b, reply: {task: {first: task-as-is, steps: [{state: working}]}}}
        - {name: c, reply: {task: {first: update, steps: [{state: working}]}}}
    """,
}


@pytest.mark.parametrize("interactions", VALID.values(), ids=list(VALID))
def test_both_accept(validator: Draft202012Validator, tmp_path: Path, interactions: str) -> None:
    text = with_interactions(interactions)
    assert (schema_errors(validator, text), loader_error(tmp_path, text)) == ([], None)


# -- what both refuse ------------------------------------------------------------------------------


def _one(interaction: str, head: str = HEAD) -> str:
    return with_interactions(f"- {interaction}", head)


def _header(old: str, new: str) -> str:
    return HEAD.replace(old, new) + "  []\n"


ARTIFACT = "{artifactId: a, parts: [{text: x}]}"
INVALID: list[tuple[str, str, str]] = [  # (what, cassette, what the loader's message says)
    (
        "misspelt key",
        _one("{name: r, reply: {task: {step: [{state: working}]}}}"),
        "reply.task.step: unknown field; did you mean 'steps'?",
    ),
    (
        "the field's Python name",
        _one("{name: r, match: {task: {from_: x}}, reply: {message: a}}"),
        "match.task.from_: unknown field; did you mean 'from'?",
    ),
    (
        "misspelt state",
        _one("{name: r, reply: {task: {steps: [{state: TASK_STATE_COMPLETE}]}}}"),
        "did you mean 'TASK_STATE_COMPLETED'?",
    ),
    (
        "unlisted state spelling",
        _one("{name: r, reply: {task: {steps: [{state: Working}]}}}"),
        "unknown task state 'Working'",
    ),
    (
        "misspelt operation",
        _one("{name: r, match: {operation: SendMesage}, reply: {message: a}}"),
        "did you mean 'SendMessage'?",
    ),
    (
        "Agentex operation in A2A",
        _one("{name: r, match: {operation: CreateTask}, reply: {message: a}}"),
        "a2a has no operation 'CreateTask'",
    ),
    (
        "A2A operation in Agentex",
        _one(
            "{name: r, match: {operation: GetExtendedAgentCard}, reply: {error: TaskNotFound}}",
            AGENTEX_HEAD,
        ),
        "agentex has no operation 'GetExtendedAgentCard'",
    ),
    (
        "misspelt predicate",
        _one("{name: r, match: {text: {startwith: a}}, reply: {message: a}}"),
        "match.text.startwith: unknown predicate; did you mean 'startswith'?",
    ),
    (
        "keywords mixed with keys",
        _one("{name: r, match: {where: {x: {startswith: a, zz: b}}}, reply: {message: a}}"),
        "match.where.x.zz: unknown predicate",
    ),
    (
        "`in` without a list",
        _one("{name: r, match: {parts: {in: a}}, reply: {message: a}}"),
        "`in` takes a list",
    ),
    (
        "`exists` not a boolean",
        _one("{name: r, match: {parts: {any: {exists: maybe}}}, reply: {message: a}}"),
        "takes true or false",
    ),
    (
        "misspelt error",
        _one("{name: r, reply: {error: TaskNotFond}}"),
        "reply.error: unknown error 'TaskNotFond'; did you mean 'TaskNotFound'?",
    ),
    (
        "unknown fault error",
        _one("{name: r, fault: {errorAfter: 1, error: Broken}, reply: {message: a}}"),
        "unknown error 'Broken'",
    ),
    (
        "two kinds of reply",
        _one("{name: r, reply: {message: a, error: TaskNotFound}}"),
        "a reply has exactly one of",
    ),
    ("no kind of reply", _one("{name: r, reply: {}}"), "a reply has exactly one of"),
    ("no reply", _one("{name: r, fault: {delayMs: 5}}"), "an interaction needs a `reply`"),
    (
        "state and artifact",
        _one(
            f"{{name: r, reply: {{task: {{steps: [{{state: working, artifact: {ARTIFACT}}}]}}}}}}"
        ),
        "a step has one of",
    ),
    (
        "deltas without say",
        _one("{name: r, reply: {task: {steps: [{state: working, deltas: [a]}]}}}"),
        "`deltas` belong to a `say` step",
    ),
    (
        "message on an artifact",
        _one(f"{{name: r, reply: {{task: {{steps: [{{artifact: {ARTIFACT}, message: m}}]}}}}}}"),
        "`message` belongs to a `state` step",
    ),
    (
        "append on a state",
        _one("{name: r, reply: {task: {steps: [{state: working, append: true}]}}}"),
        "belong to an `artifact` step",
    ),
    (
        "artifact without id",
        _one("{name: r, reply: {task: {steps: [{artifact: {parts: [{text: x}]}}]}}}"),
        "needs an `artifactId`",
    ),
    (
        "part of two kinds",
        _one("{name: r, reply: {message: {parts: [{text: x, data: {}}]}}}"),
        "a part has exactly one of",
    ),
    (
        "message without parts",
        _one("{name: r, reply: {message: {metadata: {}}}}"),
        "a message needs a non-empty `parts` list",
    ),
    ("times 0", _one("{name: r, times: 0, reply: {message: a}}"), "times: "),
    ("a number as a string", _one("{name: r, times: '2', reply: {message: a}}"), "valid integer"),
    (
        "a boolean as a string",
        _one(
            f"{{name: r, reply: {{task: {{steps: [{{artifact: {ARTIFACT}, lastChunk: 'yes'}}]}}}}}}"
        ),
        "valid boolean",
    ),
    ("status out of range", _one("{name: r, fault: {status: 200}}"), "fault.status: "),
    (
        "say in A2A",
        _one("{name: r, reply: {task: {steps: [{say: hi}]}}}"),
        "`say` steps are Agentex messages",
    ),
    (
        "Agentex state in A2A",
        _one("{name: r, reply: {task: {steps: [{state: TASK_STATE_INTERRUPTED}]}}}"),
        "is Agentex's",
    ),
    (
        "direct reply in Agentex",
        _one("{name: r, reply: {message: hi}}", AGENTEX_HEAD),
        "an Agentex reply is a task script",
    ),
    (
        "unknown stream opening",
        _one("{name: r, reply: {task: {first: snapshot, steps: [{state: working}]}}}"),
        "reply.task.first: ",
    ),
    (
        "stream opening in Agentex",
        _one("{name: r, reply: {task: {first: update, steps: [{say: hi}]}}}", AGENTEX_HEAD),
        "`first` says how an A2A stream opens",
    ),
    ("Agentex without agents", "version: 1\nprotocol: agentex\nagents: []\n", "needs `agents:`"),
    ("A2A without agent", "version: 1\n", "needs `agent:`"),
    ("version 2", _header("version: 1", "version: 2"), "version: "),
    ("version true", _header("version: 1", "version: true"), "version: "),
    ("time in seconds", _header("2026-10-06T09:00:00Z", "0"), "clock.start: "),
    ("time in words", _header("2026-10-06T09:00:00Z", "yesterday"), "clock.start: "),
    ("bad pace", _header("clock: {", "clock: {pace: 'scale=x', "), "clock.pace: "),
    (
        "a newline in an interaction's name",
        _one('{name: "deploy\\nnow", reply: {message: a}}'),
        "name: a name holds no control characters; this one has '\\n' at character 7",
    ),
    (
        "an escape in the agent's name",
        _header("name: tester", 'name: "tester\\e[31m"'),
        "agent.name: a name holds no control characters; this one has '\\x1b'",
    ),
    (
        "a C1 control in an Agentex agent's name",
        AGENTEX_HEAD.replace("name: helper", 'name: "help\\x85er"') + "  []\n",
        "agents[0].name: a name holds no control characters",
    ),
]


@pytest.mark.parametrize(
    ("text", "says"),
    [(text, says) for _, text, says in INVALID],
    ids=[what for what, _, _ in INVALID],
)
def test_both_refuse(validator: Draft202012Validator, tmp_path: Path, text: str, says: str) -> None:
    error = loader_error(tmp_path, text)
    assert error is not None and says in error
    assert schema_errors(validator, text) != []


LOADER_ONLY = {
    "interaction names are unique": (
        "- {name: twin, reply: {message: a}}\n- {name: twin, reply: {message: b}}",
        "two interactions are named",
    ),
    "`match.task.from` names an interaction of the cassette": (
        "- {name: r, match: {task: {from: nobody}}, reply: {message: a}}",
        "which is no interaction",
    ),
    "a `regex` predicate compiles (as a Python regular expression)": (
        "- {name: r, match: {text: {regex: '('}}, reply: {message: a}}",
        "bad regex",
    ),
    "every value in a reply or the card is JSON: no NaN or infinite number, no unquoted date "
    "(YAML's .nan, .inf, 2026-01-01)": (
        "- {name: r, reply: {message: {parts: [{data: {x: .nan}}]}}}",
        "is no JSON number",
    ),
}


def test_what_json_schema_cannot_say_is_refused_by_the_loader_and_named_in_the_schema(
    validator: Draft202012Validator, tmp_path: Path
) -> None:
    assert set(LOADER_ONLY) == set(NOT_IN_SCHEMA)
    description = json.loads(json_schema())["description"]
    for rule, (interactions, says) in LOADER_ONLY.items():
        text = with_interactions(interactions)
        assert schema_errors(validator, text) == []
        assert says in (loader_error(tmp_path, text) or "")
        assert rule in description


# -- documents nobody wrote ------------------------------------------------------------------------


POOL: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    3.0,
    2.5,
    "",
    "x",
    "3",
    [],
    {},
    [1],
    {"text": "hi"},
    {"parts": []},
    {"parts": [{"text": "a", "data": {}}]},
    {"parts": [{"mediaType": "a"}]},
    "TASK_STATE_INTERRUPTED",
    "interrupted",
    "TASK_STATE_COMPLETE",
    "input-required",
    "CreateTask",
    "GetExtendedAgentCard",
    "SendMesage",
    "InvalidAgentResponse",
    "TaskNotFond",
    {"startswith": "a"},
    {"startwith": "a"},
    {"startswith": "a", "z": 1},
    {"in": "x"},
    {"exists": "yes"},
    {"not": {"in": 2}},
    {"any": {"mediaType": "x"}},
    {"any": {"in": 3}},
    {"all": {"mediaType": {"in": 3}}},
    {"name": "TaskNotFound"},
    {"name": "Nope"},
    {"state": "working"},
    {"artifactId": 1, "parts": [{"text": "x"}]},
    {"say": "hi"},
    404,
    700,
    "2026-10-06T09:00:00Z",
    "yesterday",
    "scale=x",
    "agentex",
    {"steps": []},
    {"error": "TaskNotFound"},
    {"status": 503},
    ["GRPC"],
    {"ms": 5.0},
]
KEYS = [
    "zzz",
    "name",
    "state",
    "message",
    "artifact",
    "say",
    "deltas",
    "append",
    "lastChunk",
    "error",
    "task",
    "from",
    "status",
    "agent",
    "agents",
    "protocol",
    "operation",
    "text",
    "parts",
    "where",
    "times",
    "reply",
]


def _places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict | list):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            yield from _places(item, path + (key,))


def mutated(doc: Any, rng: random.Random) -> Any:
    """`doc` with one change somewhere: a value replaced, a key dropped, added or misspelt, or an
    item doubled."""
    doc = copy.deepcopy(doc)
    path = rng.choice(list(_places(doc))[1:])
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key, change = path[-1], rng.randrange(5)
    if change == 0:
        del parent[key]
    elif change == 2 and isinstance(parent, dict):
        parent[rng.choice(KEYS)] = copy.deepcopy(rng.choice(POOL))
    elif change == 3 and isinstance(parent, dict):
        parent[str(key)[:-1] or "k"] = parent.pop(key)
    elif change == 4 and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[key]))
    else:
        parent[key] = copy.deepcopy(rng.choice(POOL))
    return doc


def test_mutated_cassettes_get_the_same_answer_from_both(
    validator: Draft202012Validator, tmp_path: Path
) -> None:
    bases = [yaml.safe_load(path.read_text(encoding="utf-8")) for path in BUNDLED]
    bases += [yaml.safe_load(block) for block in readme_cassettes()]
    rng = random.Random(16)  # the same documents every run
    loader_only = [says for _, says in LOADER_ONLY.values()]
    disagreements = []
    for _ in range(400):
        doc = rng.choice(bases)
        for _ in range(rng.choice((1, 1, 2, 3))):
            doc = mutated(doc, rng)
        text = yaml.safe_dump(doc, sort_keys=False)
        error = loader_error(tmp_path, text)
        errors = schema_errors(validator, text)
        only_the_loader_knows = error and not errors and any(s in error for s in loader_only)
        if (error is None) != (not errors) and not only_the_loader_knows:
            disagreements.append(f"loader: {error or 'accepts'}; schema: {errors or 'accepts'}")
    assert disagreements == []
