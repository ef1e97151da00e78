"""The API described (issue 27): /api/openapi.json is a valid OpenAPI 3.1 document naming every
route under /api and every registered action, and a real `tracker serve` over the demo
campaign, fuzzed from it with schemathesis as its referee, answers no 500 and nothing its
schema does not allow. Every error under /api has the one shape {"error", "rule"}."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette", reason="tracker serve needs the server extra")

import schemathesis  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from openapi_spec_validator import validate  # noqa: E402
from schemathesis import GenerationMode, checks  # noqa: E402

from tests.reliability.conftest import size  # noqa: E402
from tests.support import Server, in_process, served  # noqa: E402
from tracker.cli.demo import NAME as DEMO  # noqa: E402
from tracker.cli.demo import run_demo  # noqa: E402
from tracker.server.app import api_routes  # noqa: E402
from tracker.server.openapi import openapi_document  # noqa: E402
from tracker.service.actions import ACTIONS  # noqa: E402

ERROR_KEYS = {"error", "rule"}


def test_the_document_is_valid_openapi_3_1() -> None:
    document = openapi_document()
    assert document["openapi"].startswith("3.1")
    validate(document)


def test_every_registered_action_is_described_with_its_inputs_and_rule_ids() -> None:
    schemas = openapi_document()["components"]["schemas"]
    mapping = schemas["ActionRequest"]["discriminator"]["mapping"]
    assert set(mapping) == set(ACTIONS)
    for name, action in ACTIONS.items():
        schema = schemas[mapping[name].rsplit("/", 1)[1]]
        assert schema["properties"]["action"] == {"const": name}
        inputs = schema["properties"]["inputs"]
        assert list(inputs["properties"]) == [f.name for f in action.fields]
        assert set(inputs.get("required", [])) == {f.name for f in action.fields if f.required}
        for rule in re.findall(r"\b[A-Z]{1,3}\d{1,2}\b", action.doc):
            assert rule in schema["description"]


def test_the_state_route_documents_404_for_an_event_or_turn_not_there() -> None:
    responses = openapi_document()["paths"]["/campaigns/{name}/state"]["get"]["responses"]
    assert {"200", "400", "404"} <= set(responses)
    assert "event" in responses["404"]["description"] and "turn" in responses["404"]["description"]


def test_every_whole_number_input_is_documented_with_the_least_value_taken() -> None:
    """No input advertises a minimum below what its action takes: a whole number counts or
    numbers something (1 up), and a die shows 1 up (D1)."""
    schemas = openapi_document()["components"]["schemas"]
    mapping = schemas["ActionRequest"]["discriminator"]["mapping"]
    minimums = {}
    for name, ref in mapping.items():
        for field, schema in schemas[ref.rsplit("/", 1)[1]]["properties"]["inputs"]["properties"].items():
            text = json.dumps(schema)
            minimums[(name, field)] = {int(m) for m in re.findall(r'"minimum": (-?\d+)', text)}
    assert minimums[("ntr place", "count")] == {1}
    assert minimums[("battle fire", "dice")] == {1}
    assert set().union(*minimums.values()) == {1}


def test_every_api_route_and_method_is_in_the_document_and_nothing_else() -> None:
    documented = {(path, method) for path, item in openapi_document()["paths"].items() for method in item}
    # The handlers are only looked up, never called: no service is needed to list them.
    routed = {
        (re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path), method.lower())
        for route in api_routes(None, None)  # type: ignore[arg-type]
        for method in route.methods or ()  # type: ignore[attr-defined]
        if method != "HEAD"
    }
    assert routed == documented


def test_every_error_answer_is_documented_as_the_one_error_shape() -> None:
    document = openapi_document()
    error = document["components"]["schemas"]["Error"]
    assert set(error["required"]) == ERROR_KEYS and error["additionalProperties"] is False
    for path, item in document["paths"].items():
        for method, operation in item.items():
            for status, answer in operation["responses"].items():
                if status.startswith("4"):
                    ref = answer["content"]["application/json"]["schema"]["$ref"]
                    # A command's failure is the Error with the command line's output beside it.
                    assert ref.endswith(("/Error", "/CommandOutcome")), (path, method, status)


def token_of(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    """`tracker serve` over the demo campaign, and its referee's token."""
    work = tmp_path_factory.mktemp("openapi")
    db = work / "demo.db"
    run_demo(str(db), lambda line: None)
    token = token_of(in_process("--db", str(db), "players", "add", "rita", "--referee"))
    with served(str(db), workdir=work) as server:
        yield server, token


@pytest.fixture(scope="module")
def api_schema(demo_server: tuple[Server, str]) -> Any:
    server, _ = demo_server
    return schemathesis.openapi.from_url(server.url + "/api/openapi.json")


def test_the_document_is_served_without_a_token(demo_server: tuple[Server, str]) -> None:
    server, _ = demo_server
    assert server.get("/api/openapi.json") == (200, openapi_document())


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/api/no/such/route", 404),
        ("GET", "/api/", 404),
        ("DELETE", "/api/campaigns", 405),
        ("GET", "/api/campaigns/demo/actions", 405),
        ("GET", "/api/campaigns/demo/explain/x", 400),
        ("GET", "/api/campaigns/nowhere/state", 404),
        ("GET", "/api/campaigns/nowhere/events/stream", 404),
        ("POST", "/api/command", 400),
    ],
)
def test_every_error_under_api_is_an_error_object(demo_server, method: str, path: str, status: int) -> None:
    server, token = demo_server
    answered, body = server.request(method, path, raw=b"[not json", token=token)
    assert answered == status
    assert set(body) == ERROR_KEYS and isinstance(body["error"], str)


def test_a_method_a_route_does_not_take_is_an_error_naming_the_ones_it_does(demo_server) -> None:
    server, _ = demo_server
    request = urllib.request.Request(server.url + "/api/campaigns/demo/actions", method="GET")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 405 and refused.value.headers["Allow"] == "POST"
    assert set(json.loads(refused.value.read())) == ERROR_KEYS


def test_a_body_over_the_limit_is_an_error_object(demo_server) -> None:
    server, token = demo_server
    answered, body = server.request("POST", "/api/command", raw=b" " * (1024 * 1024 + 1), token=token)
    assert (answered, set(body)) == (413, ERROR_KEYS)


# Every operation but the event stream, which answers for as long as the client listens; invalid
# requests only where there is something to get wrong (a parameter or a body).
OPERATIONS = [
    (method.upper(), path, mode)
    for path, item in openapi_document()["paths"].items()
    for method, operation in item.items()
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    if not path.endswith("/events/stream")
    and (mode is GenerationMode.POSITIVE or operation.get("parameters") or operation.get("requestBody"))
]
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]


@pytest.mark.parametrize(("method", "path", "mode"), OPERATIONS, ids=[f"{m} {p} {g.value}" for m, p, g in OPERATIONS])
def test_the_served_api_answers_as_its_document_says(
    demo_server: tuple[Server, str], api_schema: Any, method: str, path: str, mode: GenerationMode
) -> None:
    """Valid requests (positive) and invalid ones (negative), sent with the referee's token so
    the actions are refereed: never a 500, never an answer the document does not describe."""
    _, token = demo_server
    operation = api_schema[path][method]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=size(10, 200), deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    def answers_as_documented(case: Any) -> None:
        if mode is GenerationMode.POSITIVE:
            # Valid requests about the demo campaign, so that its actions are refereed (a
            # random name finds no campaign); invalid ones keep whatever name they were given.
            if "name" in (case.path_parameters or {}):
                case.path_parameters["name"] = DEMO
            if isinstance(case.body, dict) and "campaign" in case.body:
                case.body["campaign"] = DEMO
        case.call_and_validate(headers={"Authorization": f"Bearer {token}"}, checks=CHECKS)

    answers_as_documented()


def test_too_many_failed_token_checks_is_an_error_object_with_retry_after(tmp_path) -> None:
    from starlette.testclient import TestClient

    from tracker.server.access import FailedChecks
    from tracker.server.app import create_app

    db = str(tmp_path / "league.db")
    made = in_process("--db", db, "new", "autumn", "--scenario", "north-sea-1914")
    assert made.returncode == 0, made.stderr
    app = create_app(db, keys=str(tmp_path / "keys.db"), failures=FailedChecks(limit=1))
    with TestClient(app) as client:
        answers = [client.get("/api/campaigns", headers={"Authorization": "Bearer wrong"}) for _ in range(2)]
    assert [a.status_code for a in answers] == [401, 429]
    assert all(set(a.json()) == ERROR_KEYS for a in answers)
    assert answers[1].headers["Retry-After"].isdigit()


def test_an_outage_is_documented_on_every_route_that_reads_or_records() -> None:
    """A database that does not answer is a 503 with Retry-After on every route that touches
    it; the document listed 429 as the only answer to wait on."""
    document = openapi_document()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            if "401" in responses and "404" in responses:
                assert "503" in responses, (method, path)
                assert "Retry-After" in responses["503"]["headers"], (method, path)
