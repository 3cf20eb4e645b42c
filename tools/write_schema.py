"""Write the published JSON Schemas of fairtalk's result files from the pydantic models that readers validate against.

``docs/reference/results.schema.json`` describes a ``results.json`` of ``fairtalk audit`` (one per
axis folder) or ``fairtalk score``; ``docs/reference/run.schema.json`` an audit's ``run.json``.
Both come from :mod:`fairtalk.results._file_models`, the declaration of those shapes for readers
(the records declare what is written). Run ``python tools/write_schema.py`` after changing a model
(or ``SCHEMA_VERSION``); ``tests/test_result_schema.py`` fails until the committed files equal
:func:`schemas`, and ``tests/test_file_models_drift.py`` until they name every key the records write.
"""

from __future__ import annotations

import json
from pathlib import Path

from fairtalk.results._file_models import json_schema

#: The docs folder the schemas are published in.
REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference"
#: Each published file and the kind of result file it describes.
FILES = {"results.schema.json": "audit", "run.schema.json": "run"}


def schemas() -> dict[Path, str]:
    """Each schema file's path and the text it must hold."""
    return {REFERENCE / name: json.dumps(json_schema(kind), indent=2, ensure_ascii=False) + "\n" for name, kind in FILES.items()}


def main() -> None:
    """Write the schemas."""
    for path, text in schemas().items():
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
