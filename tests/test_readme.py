"""The README's examples run, and what they say they print is what they print.

Every ```python block of README.md is run, in order of the file, each in a
fresh namespace (a block written as a script, under ``if __name__ ==
"__main__":``, is only compiled: it starts a cluster on a large matrix).  A
line ``print(...)  # text`` promises the printed output: every number in
``text`` before its first ": " must match the printed one to the digits shown
(``# 29: the smallest rank ...`` promises 29, ``# 0.060`` a value that rounds
to 0.060).  Blocks written as doctests (``>>>``) are checked as doctests.
"""

import contextlib
import doctest
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")

# blocks whose printed promises are known to be stale: strict xfails, so that a
# corrected README turns them into failures until the mark goes (none now)
KNOWN_STALE: dict[str, str] = {}


def python_blocks(text):
    """[(first line number, source)] of the ```python blocks of a markdown text."""
    blocks, lines, start = [], text.splitlines(), None
    for number, line in enumerate(lines, 1):
        if start is None and line.strip() == "```python":
            start, body = number + 1, []
        elif start is not None and line.strip() == "```":
            blocks.append((start, "\n".join(body) + "\n"))
            start = None
        elif start is not None:
            body.append(line)
    return blocks


def promises(source):
    """[(line index, expected text)] of the ``print(...)  # text`` lines."""
    out = []
    for index, line in enumerate(source.splitlines()):
        match = re.match(r"\s*print\(.*\)\s*#\s*(.*)$", line)
        if match:
            out.append((index, match.group(1).split(": ")[0].strip()))
    return out


def numbers_agree(expected, printed):
    want, got = NUMBER.findall(expected), NUMBER.findall(printed)
    if len(want) != len(got):
        return False
    for w, g in zip(want, got):
        decimals = len(w.split(".")[1]) if "." in w and "e" not in w.lower() else None
        value = float(g)
        if decimals is None and "e" not in w.lower():
            if round(value) != float(w):
                return False
        elif decimals is not None:
            if f"{value:.{decimals}f}" != f"{float(w):.{decimals}f}":
                return False
        elif value != pytest.approx(float(w), rel=1e-3):
            return False
    return True


def _params():
    params = []
    for start, source in python_blocks(README.read_text()):
        marks = [pytest.mark.filterwarnings("ignore")]
        for key, reason in KNOWN_STALE.items():
            if key in source:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
        params.append(pytest.param(source, id=f"README.md:{start}", marks=marks))
    return params


@pytest.mark.parametrize("source", _params())
def test_readme_python_block(source):
    code = compile(source, str(README), "exec")
    if 'if __name__ == "__main__":' in source:
        return  # a script: compiled only
    lines = source.splitlines()
    expected = dict(promises(source))
    # run line groups so that each promised print is captured on its own
    namespace = {"__name__": "readme"}
    chunk = []
    for index, line in enumerate(lines):
        if index in expected:
            exec(compile("\n".join(chunk) + "\n", str(README), "exec"), namespace)
            chunk = []
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                exec(compile(line.strip(), str(README), "exec"), namespace)
            printed = buffer.getvalue().strip()
            assert numbers_agree(expected[index], printed), (
                f"README promises {expected[index]!r}, prints {printed!r}")
        else:
            chunk.append(line)
    exec(compile("\n".join(chunk) + "\n", str(README), "exec"), namespace)
    assert code is not None


def test_readme_doctests():
    parser = doctest.DocTestParser()
    test = parser.get_doctest(README.read_text(), {}, "README.md", str(README), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_promises_are_read_to_the_digits_shown():
    assert numbers_agree("29", "29") and not numbers_agree("29", "30")
    assert numbers_agree("0.060", "0.06012") and not numbers_agree("0.060", "0.0651")
    assert numbers_agree("ErrorEstimate(value=2663, low=2361, relative=0.4747)",
                         "ErrorEstimate(value=2663.2, low=2360.9, relative=0.47468)")
    assert not numbers_agree("ErrorEstimate(value=2663)", "ErrorEstimate(value=3089.1)")
    assert promises("print(s.size)   # 29: the smallest rank\nx = 1\n") == [(0, "29")]
