"""What programs may rely on in the contract, as plain data, and whether one contract's shapes
are a compatible growth of another's (contract/README.md, the compatibility rule). The shapes of
the current contract_version are kept in tests/data/contract-v<N>.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def recorded_path(version: int) -> Path:
    return ROOT / "tests" / "data" / f"contract-v{version}.json"


def _types(schema: dict[str, Any], defs: dict[str, Any]) -> list[str]:
    if "$ref" in schema:
        return _types(defs[schema["$ref"].rsplit("/", 1)[1]], defs)
    if "anyOf" in schema or "oneOf" in schema:
        return sorted({t for s in schema.get("anyOf", schema.get("oneOf", []))
                       for t in _types(s, defs)})
    kind = schema.get("type", "any")
    return sorted(kind if isinstance(kind, list) else [kind])


def _walk(schema: dict[str, Any], defs: dict[str, Any], path: str, required: bool,
          out: dict[str, Any], seen: tuple[str, ...] = ()) -> None:
    entry: dict[str, Any] = {"type": _types(schema, defs), "required": required}
    enum = _enum(schema, defs)
    if enum:
        entry["enum"] = enum
    out[path] = entry
    _children(schema, defs, path, out, seen)


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return defs[ref.rsplit("/", 1)[1]] if ref else schema


def _enum(schema: dict[str, Any], defs: dict[str, Any]) -> list[str]:
    schema = _resolve(schema, defs)
    values = {str(v) for v in schema.get("enum", ())}
    for option in schema.get("anyOf", schema.get("oneOf", [])):
        values |= set(_enum(option, defs))
    return sorted(values)


def _children(schema: dict[str, Any], defs: dict[str, Any], path: str, out: dict[str, Any],
              seen: tuple[str, ...]) -> None:
    """The fields inside a value (of each shape it may take), a recursive shape once."""
    ref = schema.get("$ref")
    if ref:
        if ref in seen:
            return
        seen = (*seen, ref)
    schema = _resolve(schema, defs)
    for option in schema.get("anyOf", schema.get("oneOf", [])):
        _children(option, defs, path, out, seen)
    for name, sub in schema.get("properties", {}).items():
        _walk(sub, defs, f"{path}.{name}", name in schema.get("required", ()), out, seen)
    if isinstance(schema.get("items"), dict):
        _walk(schema["items"], defs, f"{path}[]", True, out, seen)


def fields(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    _walk(schema, schema.get("$defs", {}), "", True, out)
    return out


def shapes(contract: Path = ROOT / "contract") -> dict[str, Any]:
    tools = json.loads((contract / "tools.json").read_text())
    errors = json.loads((contract / "errors.json").read_text())
    return {
        "contract_version": tools["contract_version"],
        "tools": {t["name"]: {"input": fields(t["inputSchema"]),
                              "output": fields(t["outputSchema"])} for t in tools["tools"]},
        "errors": sorted(e["code"] for e in errors["errors"]),
    }


def breaks(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What in `new` a program written against `old` could trip over (empty: `new` only grew)."""
    found = [f"error code {c} removed" for c in old["errors"] if c not in new["errors"]]
    for name, was in old["tools"].items():
        now = new["tools"].get(name)
        if now is None:
            found.append(f"tool {name} removed")
            continue
        for path, field in was["output"].items():  # results: what was always there stays,
            got = now["output"].get(path)          # with no type it did not have
            if got is None:
                found.append(f"{name}: result field {path or '(root)'} removed")
            elif not set(got["type"]) <= set(field["type"]):
                found.append(f"{name}: result field {path or '(root)'} may now be {got['type']}")
            elif field["required"] and not got["required"]:
                found.append(f"{name}: result field {path} no longer always present")
        for path, field in was["input"].items():  # arguments: all still taken, as before
            got = now["input"].get(path)
            if got is None:
                found.append(f"{name}: argument {path} removed")
            elif not set(field["type"]) <= set(got["type"]):
                found.append(f"{name}: argument {path} no longer takes {field['type']}")
            elif set(field.get("enum", ())) - set(got.get("enum", field.get("enum", ()))):
                found.append(f"{name}: argument {path} lost choices")
        for path, got in now["input"].items():
            if path.count(".") == 1 and got["required"] and path not in was["input"]:
                found.append(f"{name}: new required argument {path}")
            elif path in was["input"] and got["required"] and not was["input"][path]["required"] \
                    and path.count(".") == 1:
                found.append(f"{name}: argument {path} now required")
    return found


def record() -> Path:
    """Write the current shapes as those of the current contract_version."""
    current = shapes()
    path = recorded_path(current["contract_version"])
    tools = ",\n".join(f" {json.dumps(name)}: {json.dumps(shape, sort_keys=True)}"
                       for name, shape in sorted(current["tools"].items()))
    path.write_text(f'{{"contract_version": {current["contract_version"]},\n'
                    f'"errors": {json.dumps(current["errors"])},\n"tools": {{\n{tools}\n}}}}\n')
    return path


if __name__ == "__main__":
    print(record())
