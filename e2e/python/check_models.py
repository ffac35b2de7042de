"""Validates values against the pydantic models datamodel-codegen made.

    python check_models.py CASES_JSON PACKAGE_DIR...

CASES_JSON is a list of {"id", "module", "class", "json"}: a JSON text to
give the class `class` of `module`, a module of one of the packages (each
PACKAGE_DIR, a package named by its folder). Each is read as a server reads arguments off the
wire, Model.model_validate_json(text), pydantic's default (lax) mode.
Prints one JSON object: {"results": [{"id", "accepted", "error"}]}, the
error being pydantic's first, shortened. e2e/python_test.go writes the
cases and judges the results.
"""

import importlib
import json
import sys
from pathlib import Path

import pydantic


def main():
    cases = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    for package in sys.argv[2:]:
        sys.path.insert(0, str(Path(package).resolve().parent))
    results = []
    for case in cases:
        model = getattr(importlib.import_module(case["module"]), case["class"])
        try:
            model.model_validate_json(case["json"])
            results.append({"id": case["id"], "accepted": True})
        except pydantic.ValidationError as e:
            first = e.errors()[0]
            where = "/" + "/".join(map(str, first["loc"]))
            results.append({"id": case["id"], "accepted": False, "error": f"{where}: {first['msg']}"[:200]})
    json.dump({"results": results, "pydantic": pydantic.VERSION}, sys.stdout)


if __name__ == "__main__":
    main()
