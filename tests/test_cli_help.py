"""``crisp-server --help`` shows what running the server takes (``--host``, ``--port``), not only the commands:
the server is the default command, and the README sends hosts to ``--help`` for its options."""

from __future__ import annotations

import pytest

from crisp_server.__main__ import main
from crisp_server.settings import Settings


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


def test_the_top_level_help_lists_the_servers_options_and_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys)
    assert text.startswith("usage: crisp-server [--host HOST] [--port PORT]\n")
    assert "--host HOST  address to listen on (CRISP_HOST, default 127.0.0.1)" in text
    assert "--port PORT  port to listen on (CRISP_PORT, default 8000)" in text
    for command in ("serve", "replay", "migrate", "backup", "restore", "schema", "loadtest", "bench", "arena", "bot"):
        assert f"\n    {command} " in text, command


def test_a_commands_help_names_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert _help(capsys, "serve").startswith("usage: crisp-server serve [-h] [--host HOST] [--port PORT]\n")
    assert _help(capsys, "backup").startswith("usage: crisp-server backup [-h] [--force] FILE\n")


def test_the_options_without_a_command_run_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Settings] = {}

    def serve(settings: Settings) -> int:
        seen["settings"] = settings
        return 0

    monkeypatch.setattr("crisp_server.serve.serve", serve)
    assert main(["--host", "0.0.0.0", "--port", "8123"]) == 0
    settings = seen["settings"]
    assert (settings.host, settings.port) == ("0.0.0.0", 8123)


def test_the_bot_speaks_every_language_of_the_server(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys, "bot")
    assert "--lang {en,de,fr,es,it,nl}" in text
    assert "language of the server's messages (default en)" in " ".join(text.split())
