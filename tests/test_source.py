"""gradscope.core._source: reading the user's statements from source text (multi-line statements, compound
headers, decorators), with no torch."""
from __future__ import annotations

import linecache

from gradscope.core import _source


def test_statement_reader_on_source_text():
    src = ("class A:\n"
           "    @decorate(\n"
           "        1)\n"
           "    def f(self, x):\n"
           "        if (x >\n"
           "                0):\n"
           "            y = g(x,\n"
           "                  2)  # two\n"
           "        return y\n")
    linecache.cache["<rules-demo>"] = (len(src), None, src.splitlines(True), "<rules-demo>")
    assert _source.statement("<rules-demo>", 8) == (7, "y = g(x, 2)")
    assert _source.statement("<rules-demo>", 6) == (5, "if (x > 0):")  # a compound statement: its header only
    assert _source.statement("<rules-demo>", 3) == (2, "@decorate(1)")
    assert _source.statement("<rules-demo>", 9) is None  # one line: nothing to change
    assert _source.statement("<no-such-file>", 3) is None
