"""Mutation tests: one known bug injected into a real program (tests/mutate.py); gradscope must name
the cause and the injected line. A seeded subset small enough for CI (the whole matrix is
``python benchmarks/programs.py``)."""
from __future__ import annotations

import ast

import _programs as P
import mutate as M
import pytest

#: (program, operator) -> reason, for the subset below that gradscope gets wrong today
XFAIL: dict[tuple[str, str], str] = {}

#: the CI subset: every operator on the smallest program, plus the operators that can raise on others
SUBSET = [("gcn", op) for op in M.OPERATORS] + [("reinforce", "inplace"), ("actor_critic", "freeze")]


def _subset():
    out = []
    for prog, op in SUBSET:
        reason = XFAIL.get((prog, op))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(prog, op, marks=marks, id=f"{prog}-{op}"))
    return out


@pytest.mark.parametrize("program,operator", _subset())
def test_gradscope_names_injected_bug(program, operator):
    o = M.mutate_and_judge(program, operator, seed=0)
    if o.status == "no_candidate":
        pytest.skip(f"{program} has no place for {operator}")
    assert o.status == "scored", f"no candidate changed gradient flow (tried lines {o.tried})"
    assert o.cause_ok and o.line_ok, (f"line {o.line} `{o.code}` ({o.effect}): expected {o.expected} there, "
                                      f"got {o.got_cause} @ {o.got_site} {o.note}")


# --------------------------------------------------------------------------- the tool itself (no torch runs)
@pytest.mark.parametrize("operator", M.OPERATORS)
def test_every_candidate_is_valid_python_with_the_bug_on_its_line(operator):
    for prog in P.program_names():
        for m in M.candidates(prog, operator):
            ast.parse(m.source)
            line = m.source.splitlines()[m.line - 1]
            want = {"detach": ".detach()", "data_attr": ").data", "no_grad": "", "tolist": ".tolist())",
                    "freeze": ".requires_grad_(False)", "inplace": ".mul_(1.0)", "skip_layer": "self."}[operator]
            assert want in line, (prog, m.line, line)
            if operator == "no_grad":
                assert m.source.splitlines()[m.line - 2].strip() == "with torch.no_grad():"


def test_candidates_come_from_forward_methods_only():
    src = (
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(2, 2)\n"
        "    def forward(self, x):\n"
        "        x = self.fc(x)\n"
        "        return x\n"
        "def train():\n"
        "    y = torch.ones(2)\n"
        "    net = Net()\n"
        "    opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
    )
    det = M.candidates("x", "detach", src)
    assert [m.line for m in det] == [7]
    assert "x = (self.fc(x)).detach()" in det[0].source
    skip = M.candidates("x", "skip_layer", src)
    assert [m.code for m in skip] == ["self.fc(x)"]
    fr = M.candidates("x", "freeze", src)
    assert [(m.line, m.code) for m in fr] == [(12, "net.fc.requires_grad_(False)")]
    assert fr[0].source.splitlines()[12] == "    opt = torch.optim.SGD(net.parameters(), lr=0.1)"


def test_effect_rejects_equivalent_mutants(tmp_path):
    """A mutant that changes no gradient (detach of a value only logged) is not scored."""
    prog = tmp_path / "tiny.py"
    prog.write_text(
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(2, 1)\n"
        "        self.scale = torch.nn.Parameter(torch.ones(1))\n"
        "    def forward(self, x):\n"
        "        y = self.fc(x)\n"
        "        log = y.sum()\n"
        "        return y * self.scale\n"
        "net = Net()\n"
        "net(torch.ones(3, 2)).sum().backward()\n"
    )
    src = prog.read_text()
    m_equiv, m_real = None, None
    for m in M.candidates("tiny", "detach", src):
        if m.line == 9:
            m_equiv = m
        if m.line == 8:
            m_real = m
    M._CLEAN["tiny"] = P.run_program(str(prog), track_grads=True).grads
    try:
        assert M._CLEAN["tiny"] == {(0, "fc.weight"), (0, "fc.bias"), (0, "scale")}
        for m, want in ((m_equiv, None), (m_real, ("lost", [(0, "fc.bias"), (0, "fc.weight")]))):
            path = tmp_path / "mut.py"
            path.write_text(m.source)
            assert M.effect(m, str(path)) == want, m.code
    finally:
        M._CLEAN.pop("tiny", None)
