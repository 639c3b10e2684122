"""The gradebook's URL: every connection to a PostgreSQL gradebook, nbgrader's included, gives
up on a server that does not answer instead of hanging until a submission's deadline (which
would be recorded as the student's)."""

from __future__ import annotations

import socket
import time

import pytest

from attention_course.classgrade import gradebook


def test_a_postgresql_url_gets_the_timeouts_and_keeps_its_own():
    url = gradebook.normalize("postgresql://me:secret@127.0.0.1:5432/course?connect_timeout=3")
    assert url.startswith("postgresql+psycopg://")
    for key, value in gradebook.POSTGRES_OPTIONS.items():
        assert f"{key}={'3' if key == 'connect_timeout' else value}" in url
    assert gradebook.normalize(url) == url  # once is enough
    assert (
        gradebook.shown(url)
        == "postgresql+psycopg://me:***@127.0.0.1:5432/course?connect_timeout=3"
    )
    sqlite = gradebook.default_url(gradebook.Path("/srv/course"))
    assert gradebook.normalize(sqlite) == sqlite


def test_nbgraders_own_connection_to_a_silent_server_gives_up(tmp_path):
    """A server that accepts the connection and never says a word (a host gone mid-way
    looks the same): nbgrader's Gradebook, opened on the URL the engine gives it, fails
    within the connect timeout."""
    from nbgrader.api import Gradebook

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        url = gradebook.url(tmp_path, f"postgresql://grader@127.0.0.1:{silent.getsockname()[1]}/db")
        start = time.monotonic()
        with pytest.raises(Exception) as failed:
            Gradebook(url)
        took = time.monotonic() - start
    finally:
        silent.close()
    assert "timeout" in str(failed.value).lower(), failed.value
    assert took < gradebook.CONNECT_SECONDS + 10, took
