"""The incremental prefixes (one root added or removed in O(1)) agree with the full pass over all roots
whenever they answer; where they cannot, they say so and change nothing (gradscope/_record/_prefixes.py)."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from gradscope._record._prefixes import Prefixes


class Root:
    def __init__(self, var, cls, leaf, flat):
        self.var, self.cls, self.leaf, self.flat = var, cls, leaf, flat

    def __repr__(self):
        return f"Root({self.var!r}, {self.cls!r}, leaf={self.leaf}, flat={self.flat})"


_root = st.builds(Root, st.sampled_from([None, "m", "m_2", "net", "linear"]),
                  st.sampled_from(["Linear", "M", "M_3", "Net", "Sequential"]), st.booleans(), st.booleans())
_rels = st.frozensets(st.sampled_from(["weight", "bias", "0.weight", "fc.weight"]), max_size=2)
_op = st.one_of(st.tuples(st.just("add"), _root, _rels), st.tuples(st.just("remove"), st.integers(0, 50)))


def _expected(roots, rels):
    return dict(Prefixes().full(roots, rels))


@settings(max_examples=400, deadline=None)
@given(st.lists(_op, max_size=40))
def test_incremental_prefixes_equal_the_full_pass_whenever_they_answer(ops):
    book, roots, rels = Prefixes(), [], {}
    for op in ops:
        if op[0] == "add":
            r, s = op[1], set(op[2])
            roots.append(r)
            rels[r] = s
            if book.add(r, s) is None:
                assert book.pre == _expected(roots[:-1], rels), "a refused add changed the prefixes"
                book.full(roots, rels)
        else:
            bare = [r for r in roots if not rels[r]]
            if not bare:
                continue
            r = bare[op[1] % len(bare)]
            roots.remove(r)
            del rels[r]
            if not book.remove(r):
                book.full(roots, rels)
        assert book.pre == _expected(roots, rels), (roots, rels)


def test_a_root_per_iteration_under_one_variable_is_numbered_without_a_full_pass():
    book = Prefixes()
    roots = [Root("m", "Linear", True, True) for _ in range(5)]
    answers = [book.add(r, {"weight", "bias"}) for r in roots]
    # the second root makes the names "several" and the group's first clash: two full passes, then O(1)
    assert answers[0] == "m." and answers[1] is None
    book.full(roots[:2], {r: {"weight", "bias"} for r in roots[:2]})
    assert [book.add(r, {"weight", "bias"}) for r in roots[2:]] == ["m_3.", "m_4.", "m_5."]
    assert book.pre[roots[1]] == "m_2."


def test_a_root_without_tensors_leaves_without_renumbering_others():
    book = Prefixes()
    a, b, loss = Root("enc", "Linear", True, True), Root("dec", "Linear", True, True), Root(None, "MSELoss", True, True)
    rels = {a: {"weight"}, b: {"weight"}, loss: set()}
    book.full([a, b, loss], rels)
    assert book.pre == {a: "enc.", b: "dec.", loss: "mseloss."}
    assert book.remove(loss) is True
    assert book.pre == {a: "enc.", b: "dec."}


def _check_add(book, roots, rels, r, s):
    """add() answers as the full pass would, or refuses; either way the prefixes end as the full pass's."""
    roots.append(r)
    rels[r] = s
    if book.add(r, s) is None:
        book.full(roots, rels)
    assert book.pre == _expected(roots, rels)


def test_a_number_a_later_group_took_first_is_not_given_twice():
    # `m`, `m_2` (one variable), then two models without a variable of a class named `M_3`: the second
    # is numbered from its class ("m_3."). A third `m` comes before them in the full pass, so it is m_3
    # and the class's is m_3_2: the incremental answer must not be m_4.
    book, roots, rels = Prefixes(), [], {}
    for r in (Root("m", "Net", False, False), Root("m", "Net", False, False),
              Root(None, "M_3", False, False), Root(None, "M_3", False, False)):
        _check_add(book, roots, rels, r, {"weight"})
    assert book.pre[roots[3]] == "m_3."
    _check_add(book, roots, rels, Root("m", "Net", False, False), {"weight"})
    assert book.pre[roots[4]] == "m_3." and book.pre[roots[3]] == "m_3_2."


def test_numbers_of_one_base_name_shared_by_two_groups_stay_in_group_order():
    # leaf and non-leaf Linear models without a variable: the keys differ ("linear." / ""), the base
    # name of their numbers is the same ("linear")
    book, roots, rels = Prefixes(), [], {}
    for leaf in (False, False, True, True, False):
        _check_add(book, roots, rels, Root(None, "Linear", leaf, False), {"weight"})
    assert sorted(book.pre.values()) == sorted(["", "linear.", "linear_2.", "linear_3.", "linear_4."])
