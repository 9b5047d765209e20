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


def test_a_site_inside_an_installed_package_is_shown_at_the_users_call():
    from gradscope.core.model import Frame, Site
    from gradscope.diagnosis.common import users_site

    user = Frame("/home/u/train.py", 9, "step", "enc.freeze()")
    outer = Frame("/home/u/train.py", 17, "<module>", "step()")
    lib = Frame("/venv/lib/python3.11/site-packages/lightning/pytorch/core/module.py", 1406,
                "LightningModule.freeze", "param.requires_grad = False")
    site = Site(lib.filename, lib.lineno, lib.function, lib.code, (outer, user, lib))
    got = users_site(site, {"/home/u/train.py": "In[3]"}.get)
    assert (got.filename, got.lineno, got.function, got.code, got.label) == (
        "/home/u/train.py", 9, "step", "enc.freeze()", "In[3]")
    assert got.stack == site.stack  # (the library's own line stays visible in the stack)
    mine = Site(user.filename, user.lineno, user.function, user.code, (outer, user))
    assert users_site(mine) is mine  # the user's own line: as it is
    only_lib = Site(lib.filename, lib.lineno, lib.function, lib.code, (lib,))
    assert users_site(only_lib) is only_lib  # nothing of the user's on the stack: as it is
    dist = Site("/usr/lib/python3/dist-packages/pkg/m.py", 3, "f", "x", (user, Frame("/usr/lib/python3/dist-packages/"
                                                                                      "pkg/m.py", 3, "f", "x")))
    assert users_site(dist).lineno == 9
