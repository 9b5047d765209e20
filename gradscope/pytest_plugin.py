"""pytest plugin (registered as the ``gradscope`` pytest11 entry point).

Provides the ``gradscope_trace`` fixture: an active :func:`gradscope.trace` around the
test body, stopped at teardown. When the test fails, gradscope's report is added to
the failure output as a "gradscope report" section::

    def test_model_learns(gradscope_trace):
        loss = model(x).sum()
        loss.backward()
        gradscope_trace.check()   # AssertionError with the explanations
"""
from __future__ import annotations

import io

import pytest

_KEY = pytest.StashKey()  # the test's Trace


@pytest.fixture
def gradscope_trace(request):
    """An active gradscope trace around the test body (stopped at teardown)."""
    import gradscope

    tr = gradscope.trace()
    request.node.stash[_KEY] = tr
    tr.__enter__()
    try:
        yield tr
    finally:
        _stop(tr)


def _stop(tr, exc: BaseException | None = None) -> None:
    if tr.recording:
        tr.__exit__(type(exc) if exc else None, exc, exc.__traceback__ if exc else None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    tr = item.stash.get(_KEY, None)
    if tr is None or rep.when != "call" or not rep.failed:
        return
    try:
        # stop recording before rendering; an error other than a failed assert is the
        # step's failure, which the trace then explains
        exc = call.excinfo.value if call.excinfo is not None else None
        _stop(tr, exc if isinstance(exc, Exception) and not isinstance(exc, AssertionError) else None)
        text = report_text(tr)
        if tr.verification is None and (tr.summary().problems or tr.failure is not None):
            text += ("\n(not verified: this fixture traces the test body, which gradscope cannot re-run; "
                     "gradscope.testing.assert_gradients_flow(model, step) re-runs `step` with each candidate cut "
                     "undone and says what that proved)\n")
    except Exception as e:  # never break the test run because of the report
        text = f"gradscope could not render its report: {type(e).__name__}: {e}"
    rep.sections.append(("gradscope report", text))


def report_text(tr, width: int = 100) -> str:
    """The trace's report as plain text."""
    from rich.console import Console

    buf = io.StringIO()
    tr.report(console=Console(file=buf, width=width, color_system=None, force_terminal=False))
    return buf.getvalue()
