"""Print pip pins of the lowest versions pyproject.toml declares.

``python .ci/minimums.py test`` prints ``numpy==1.24`` style lines for the
library's dependencies and the given extras, so that CI can install exactly the
declared minimums and run the tests: a declared minimum is a tested one.
Requirements without a lower bound are printed as they are.
"""

import re
import sys
import tomllib
from pathlib import Path

root = Path(__file__).resolve().parents[1]
project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
requirements = list(project["dependencies"])
for extra in sys.argv[1:]:
    requirements += [r for r in project["optional-dependencies"][extra]
                     if not r.startswith("sketchlab")]
pins = {}
for requirement in requirements:
    match = re.fullmatch(r"([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*>=\s*([0-9][^,;\s]*)", requirement)
    if match:
        name, extras, version = match.groups()
        pins[name.lower()] = f"{name}{extras or ''}=={version}.*" if version.count(".") < 2 \
            else f"{name}{extras or ''}=={version}"
    else:
        pins.setdefault(requirement.lower(), requirement)
print("\n".join(pins.values()))
