"""`tracker serve` when its imports fail: a missing server extra is told as the extra to install;
a module of the tracker's own that fails to import (a broken or half-upgraded install) is told as
that module and its error, not as an extra to install, which would not mend it."""

from __future__ import annotations

from tracker.server.command import missing_extra


def test_a_missing_web_framework_is_the_server_extra_to_install() -> None:
    said = str(missing_extra(ImportError("No module named 'starlette'", name="starlette")))
    assert said == (
        "tracker serve needs the server extra (starlette is missing): pip install 'twtea-naval-tracker[server]', "
        "or pip install '.[server]' in a checkout"
    )


def test_the_trackers_own_module_failing_is_said_as_it_is_not_as_a_missing_extra() -> None:
    error = ImportError("cannot import name 'named_nation_rows' from 'projections.rows'", name="projections.rows")
    said = str(missing_extra(error))
    assert "server extra" not in said
    assert said == (
        "tracker serve could not load the tracker's own projections.rows "
        "(cannot import name 'named_nation_rows' from 'projections.rows'): reinstall the tracker"
    )
