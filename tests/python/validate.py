"""Checks JSON shapes against the providers' official SDK types.

Usage: validate.py CASES.json

CASES.json holds a list of cases `{"kind": ..., "name": ..., "value": ...}`.
Each case is validated with the official type for its kind; one line is
printed per case, every failure with its case name and the validator's
error, and the exit status is non-zero when any case failed.

Kinds:
  anthropic_tool, anthropic_message             anthropic.types (TypedDicts)
  openai_chat_tool, openai_chat_tool_message,
  openai_responses_tool,
  openai_function_call_output,
  openai_chat_assistant_message,
  openai_responses_function_call                openai.types (TypedDicts)
  gemini_tool, gemini_function_declaration,
  gemini_content                                google.genai.types (pydantic models)
  mcp_tool, mcp_call_tool_params,
  mcp_call_tool_result                          mcp.types (pydantic models)
  json_schema      the value is a schema; checked against the 2020-12 meta-schema
  instance         {"schema": S, "instance": I}: I must validate against S

TypedDicts are checked strictly: pydantic ignores keys a TypedDict does not
declare, and validates `Iterable[...]` fields lazily (an invalid item only
shows up when the iterator is consumed, and a later dump silently turns it
into an empty list). So every TypedDict reachable from the root type is made
to forbid extra keys, every lazy iterator is consumed, and the validated
value is compared with the input, so a key the type does not know fails the
case. Pydantic models are validated as given and from their JSON text, and
must dump back (by alias, without unset or None fields) to the input.
"""

from __future__ import annotations

import json
import os
import sys
import typing
from typing import Any, Callable

import pydantic
from pydantic import TypeAdapter, ValidationError
from typing_extensions import is_typeddict


class CaseFailure(Exception):
    """A case that the official type refuses."""


# --- TypedDict-based SDK types (anthropic, openai) -------------------------


def _explain(error: ValidationError) -> str:
    """The pydantic error, less the noise of union variants that were never
    meant: an error under a variant whose `type` (or `role`) tag did not
    match is left out, unless nothing else remains. Set VALIDATE_VERBOSE=1
    for every error."""
    if os.environ.get("VALIDATE_VERBOSE"):
        return str(error)
    errors = error.errors()
    wrong_variants = {
        tuple(e["loc"][:-1])
        for e in errors
        if e["type"] == "literal_error"
        and len(e["loc"]) >= 2
        and e["loc"][-1] in ("type", "role")
        and isinstance(e["loc"][-2], str)
        and e["loc"][-2][:1].isupper()
    }
    kept = [e for e in errors if not any(tuple(e["loc"][: len(v)]) == v for v in wrong_variants)]
    if not kept:
        kept = errors
    lines = [f"{error.error_count()} validation error(s) for {error.title}"]
    for e in kept:
        location = ".".join(str(part) for part in e["loc"]) or "$"
        shown = repr(e.get("input"))
        if len(shown) > 160:
            shown = shown[:157] + "..."
        lines.append(f"  {location}: {e['msg']} [type={e['type']}, input={shown}]")
    if len(kept) < len(errors):
        lines.append(
            f"  ({len(errors) - len(kept)} more about union variants whose type tag does not match;"
            " VALIDATE_VERBOSE=1 shows them)"
        )
    return "\n".join(lines)


def _forbid_extra_keys(tp: Any, seen: set[int]) -> None:
    """Makes every TypedDict reachable from `tp` refuse unknown keys."""
    if id(tp) in seen:
        return
    seen.add(id(tp))
    if is_typeddict(tp):
        # Keep what the SDK set (`arbitrary_types_allowed` for file inputs).
        config = dict(getattr(tp, "__pydantic_config__", None) or {})
        config["extra"] = "forbid"
        tp.__pydantic_config__ = pydantic.ConfigDict(**config)
        for hint in typing.get_type_hints(tp, include_extras=True).values():
            _forbid_extra_keys(hint, seen)
        return
    for arg in typing.get_args(tp):
        _forbid_extra_keys(arg, seen)
    origin = typing.get_origin(tp)
    if origin is not None:
        _forbid_extra_keys(origin, seen)


def _consume(value: Any, path: str) -> Any:
    """The value with every lazy validator iterator consumed into a list;
    a validation error inside one is raised with its path."""
    if isinstance(value, dict):
        return dict(_consume_all(((k, v, f"{path}.{k}") for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return [v for _, v in _consume_all(((i, v, f"{path}[{i}]") for i, v in enumerate(value)))]
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    if hasattr(value, "__iter__") and hasattr(value, "__next__"):
        items, problems = [], []
        iterator = iter(value)
        index = 0
        while True:
            try:
                item = next(iterator)
            except StopIteration:
                break
            except ValidationError as e:
                # The iterator moves past a bad item: report every one.
                problems.append(f"at {path}[{index}] (a lazily validated list):\n{_explain(e)}")
                index += 1
                continue
            try:
                items.append(_consume(item, f"{path}[{index}]"))
            except CaseFailure as e:
                problems.append(str(e))
            index += 1
        if problems:
            raise CaseFailure("\n".join(problems))
        return items
    return value


def _consume_all(entries: Any) -> list[tuple[Any, Any]]:
    """`(key, consumed value)` for each `(key, value, path)`, raising every
    problem found at once."""
    out, problems = [], []
    for key, value, path in entries:
        try:
            out.append((key, _consume(value, path)))
        except CaseFailure as e:
            problems.append(str(e))
    if problems:
        raise CaseFailure("\n".join(problems))
    return out


def _same_base64(expected: Any, actual: Any) -> bool:
    """Google's SDK reads standard base64 and writes it URL-safe: the same
    bytes, spelt differently."""
    if not (isinstance(expected, str) and isinstance(actual, str)):
        return False
    return expected.translate(str.maketrans("+/", "-_")) == actual


def _differences(expected: Any, actual: Any, path: str = "$", base64_urlsafe: bool = False) -> list[str]:
    """Where `actual` (the validated value) lost or changed part of
    `expected` (the input); `base64_urlsafe` takes URL-safe base64 of a
    standard base64 string as the same value."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: became {type(actual).__name__}"]
        out = []
        for key, value in expected.items():
            if key not in actual:
                out.append(f"{path}.{key}: key not known to the type (pydantic dropped it)")
            else:
                out.extend(_differences(value, actual[key], f"{path}.{key}", base64_urlsafe))
        for key in actual:
            if key not in expected:
                out.append(f"{path}.{key}: key added by validation")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{path}: became {type(actual).__name__}"]
        if len(expected) != len(actual):
            return [f"{path}: {len(expected)} items became {len(actual)}"]
        out = []
        for i, (e, a) in enumerate(zip(expected, actual)):
            out.extend(_differences(e, a, f"{path}[{i}]", base64_urlsafe))
        return out
    if base64_urlsafe and _same_base64(expected, actual):
        return []
    if expected != actual or type(expected) is not type(actual):
        numbers = (int, float)
        if (
            isinstance(expected, numbers)
            and isinstance(actual, numbers)
            and not isinstance(expected, bool)
            and not isinstance(actual, bool)
            and expected == actual
        ):
            return []
        return [f"{path}: {expected!r} became {actual!r}"]
    return []


def typed_dict_checker(tp: Any) -> Callable[[Any], None]:
    _forbid_extra_keys(tp, set())
    adapter = TypeAdapter(tp)

    def check(value: Any) -> None:
        try:
            validated = adapter.validate_python(value)
        except ValidationError as e:
            raise CaseFailure(_explain(e)) from None
        validated = _consume(validated, "$")
        diffs = _differences(value, validated)
        # The dump is what the SDK would send: it must keep every key too.
        dumped = adapter.dump_python(validated, mode="json", exclude_none=False, warnings=False)
        diffs += [f"dump: {d}" for d in _differences(value, dumped)]
        if diffs:
            raise CaseFailure("\n".join(diffs))

    return check


# --- pydantic-model SDK types (google-genai, mcp) ---------------------------


def _extra_keys(model: Any, path: str = "$") -> list[str]:
    """Keys a model kept as extras (models with `extra="allow"`)."""
    out = []
    if isinstance(model, pydantic.BaseModel):
        for key in model.model_extra or {}:
            out.append(f"{path}.{key}: key not known to {type(model).__name__} (kept only as an extra)")
        for name in type(model).model_fields:
            out.extend(_extra_keys(getattr(model, name), f"{path}.{name}"))
    elif isinstance(model, (list, tuple)):
        for i, item in enumerate(model):
            out.extend(_extra_keys(item, f"{path}[{i}]"))
    elif isinstance(model, dict):
        for key, item in model.items():
            out.extend(_extra_keys(item, f"{path}.{key}"))
    return out


def model_checker(model_cls: Any) -> Callable[[Any], None]:
    def check(value: Any) -> None:
        try:
            model_cls.model_validate(value)
            model = model_cls.model_validate_json(json.dumps(value))
        except ValidationError as e:
            raise CaseFailure(_explain(e)) from None
        diffs = _extra_keys(model)
        # Unset fields with defaults (MCP's `resultType`, say) are left out:
        # what the input did not say cannot be lost.
        dumped = model.model_dump(by_alias=True, exclude_none=True, exclude_unset=True, mode="json")
        diffs += [f"round trip: {d}" for d in _differences(value, dumped, base64_urlsafe=True)]
        if diffs:
            raise CaseFailure("\n".join(diffs))

    return check


# --- JSON Schema ------------------------------------------------------------


def json_schema_checker() -> Callable[[Any], None]:
    import jsonschema

    def check(value: Any) -> None:
        try:
            jsonschema.Draft202012Validator.check_schema(value)
        except jsonschema.exceptions.SchemaError as e:
            raise CaseFailure(f"not a valid JSON Schema 2020-12: {e.message} at {list(e.absolute_path)}") from None

    return check


def instance_checker() -> Callable[[Any], None]:
    import jsonschema

    def check(value: Any) -> None:
        schema, instance = value["schema"], value["instance"]
        validator = jsonschema.Draft202012Validator(schema)
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
        if errors:
            raise CaseFailure(
                "\n".join(f"at {list(e.absolute_path)}: {e.message}" for e in errors)
                + f"\ninstance: {json.dumps(instance)}"
            )

    return check


# --- kinds ------------------------------------------------------------------


def _kinds() -> dict[str, Callable[[], Callable[[Any], None]]]:
    def anthropic_tool():
        from anthropic.types import ToolParam

        return typed_dict_checker(ToolParam)

    def anthropic_message():
        from anthropic.types import MessageParam

        return typed_dict_checker(MessageParam)

    def openai_chat_tool():
        from openai.types.chat import ChatCompletionToolParam

        return typed_dict_checker(ChatCompletionToolParam)

    def openai_chat_tool_message():
        from openai.types.chat import ChatCompletionToolMessageParam

        return typed_dict_checker(ChatCompletionToolMessageParam)

    def openai_responses_tool():
        from openai.types.responses import FunctionToolParam

        return typed_dict_checker(FunctionToolParam)

    def openai_function_call_output():
        from openai.types.responses.response_input_param import FunctionCallOutput

        return typed_dict_checker(FunctionCallOutput)

    def openai_chat_assistant_message():
        from openai.types.chat import ChatCompletionAssistantMessageParam

        return typed_dict_checker(ChatCompletionAssistantMessageParam)

    def openai_responses_function_call():
        from openai.types.responses import ResponseFunctionToolCallParam

        return typed_dict_checker(ResponseFunctionToolCallParam)

    def gemini_tool():
        from google.genai.types import Tool

        return model_checker(Tool)

    def gemini_function_declaration():
        from google.genai.types import FunctionDeclaration

        return model_checker(FunctionDeclaration)

    def gemini_content():
        from google.genai.types import Content

        return model_checker(Content)

    def mcp_tool():
        from mcp.types import Tool

        return model_checker(Tool)

    def mcp_call_tool_params():
        from mcp.types import CallToolRequestParams

        return model_checker(CallToolRequestParams)

    def mcp_call_tool_result():
        from mcp.types import CallToolResult

        return model_checker(CallToolResult)

    return {
        "anthropic_tool": anthropic_tool,
        "anthropic_message": anthropic_message,
        "openai_chat_tool": openai_chat_tool,
        "openai_chat_tool_message": openai_chat_tool_message,
        "openai_responses_tool": openai_responses_tool,
        "openai_function_call_output": openai_function_call_output,
        "openai_chat_assistant_message": openai_chat_assistant_message,
        "openai_responses_function_call": openai_responses_function_call,
        "gemini_tool": gemini_tool,
        "gemini_function_declaration": gemini_function_declaration,
        "gemini_content": gemini_content,
        "mcp_tool": mcp_tool,
        "mcp_call_tool_params": mcp_call_tool_params,
        "mcp_call_tool_result": mcp_call_tool_result,
        "json_schema": json_schema_checker,
        "instance": instance_checker,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(f"usage: {argv[0]} CASES.json", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    if not isinstance(cases, list) or not cases:
        print("validate.py: expected a non-empty JSON list of cases", file=sys.stderr)
        return 2

    factories = _kinds()
    checkers: dict[str, Callable[[Any], None]] = {}
    passed, failures = 0, []
    for case in cases:
        kind, name = case.get("kind"), case.get("name", "?")
        label = f"{kind} {name}"
        try:
            if kind not in factories:
                raise CaseFailure(f"unknown kind {kind!r}; known: {', '.join(factories)}")
            if kind not in checkers:
                checkers[kind] = factories[kind]()
            checkers[kind](case["value"])
        except CaseFailure as e:
            failures.append((label, str(e)))
            print(f"FAIL {label}")
            continue
        except Exception as e:  # a crash in a checker is a failure too, not a pass
            failures.append((label, f"{type(e).__name__}: {e}"))
            print(f"FAIL {label}")
            continue
        passed += 1
        print(f"ok   {label}")

    if failures:
        print()
        print(f"{len(failures)} FAILURES:")
        for label, error in failures:
            print(f"--- {label}")
            print(error)
    versions = ", ".join(
        f"{p}=={_version(p)}" for p in ("anthropic", "openai", "mcp", "google-genai", "jsonschema", "pydantic")
    )
    print(f"checked with {versions}")
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "?"


if __name__ == "__main__":
    sys.exit(main(sys.argv))
