"""Secrets are masked where they can appear, and only there: never inside a file name."""

import pytest
from click.testing import CliRunner

from mediabot.cli import main
from mediabot.text.masking import scrub
from tests.support.config_files import dead_servers, write_config


def test_scrub_hides_secrets_and_key_query_strings():
    text = ("GET http://h/api/v3/series?apikey=abc123&x=1 with sk-secret and api_key=zz "
            "https://u:pw@h/v1?api-key=k&monkey=ok")
    assert scrub(text, ["sk-secret"]) == (
        "GET http://h/api/v3/series with *** and api_key=*** https://h/v1")


@pytest.mark.parametrize("text, expected", [
    ("Unable to connect to qBittorrent at http://admin:hunter2@qbit.lan:8080/api/v2/login",
     "Unable to connect to qBittorrent at http://qbit.lan:8080/api/v2/login"),
    ("'http://admin:p@ss:w0rd@192.168.1.20:7878/x'", "'http://192.168.1.20:7878/x'"),
    ("deluge said <https://:hunter2@deluge.home.arpa>", "deluge said <https://deluge.home.arpa>"),
    ("password=hunter2 pass=hunter2 token=t0k", "password=*** pass=*** token=***"),
    ("bypass=ok e-mail me@example.com, path /data/tv/Severance",
     "bypass=ok e-mail me@example.com, path /data/tv/Severance"),
])
def test_scrub_removes_url_userinfo_whole_and_keeps_hosts_and_paths(text, expected):
    """The choice written in masking's docstring: credentials go, hosts and paths stay."""
    assert scrub(text) == expected


def test_a_short_secret_is_never_searched_for():
    text = "could not read /etc/mediabot/key.toml (x-key)"
    assert scrub(text, ["key", "x"]) == text
    assert scrub("http://localhost:8989/x", ["x"]) == "http://localhost:8989/x"


def test_a_secret_inside_a_longer_word_is_left_alone_but_a_standalone_one_is_masked():
    secret = "hunter22"
    assert scrub(f"/srv/{secret}x/config.toml", [secret]) == f"/srv/{secret}x/config.toml"
    assert scrub(f"401 for key {secret}: rejected", [secret]) == "401 for key ***: rejected"
    assert scrub(f"Authorization: '{secret}'", [secret]) == "Authorization: '***'"


def test_check_shows_the_config_path_even_when_it_contains_a_secret(tmp_path):
    """The config line is our own path; a secret that happens to spell a folder stays shown."""
    folder = tmp_path / "supersecret"
    folder.mkdir()
    path = write_config(
        folder, server={"public_url": "https://sms.example.com"},
        database={"path": folder / "m.db"},
        **dead_servers(account_sid="AC0", auth_token="supersecret"))
    result = CliRunner().invoke(main, ["check", "--config", str(path)])
    assert f"ok   config: {path} is valid" in result.output
    assert f"{folder / 'm.db'} will be created" in result.output
    assert "***" not in result.output.split("server:")[0]


def test_a_url_in_a_config_error_shows_no_credentials(tmp_path):
    path = write_config(tmp_path, server={"public_url": "https://sms.example.com"},
                        sonarr={"url": "sonarr:8989/?apikey=0123456789abcdef", "api_key": "k"},
                        llm={"base_url": "ftp://me:pa55word@host/v1"})
    result = CliRunner().invoke(main, ["users", "list", "--config", str(path)])
    assert result.exit_code == 2
    assert "[sonarr] url = 'sonarr:8989/?apikey=***' is not an http(s) URL" in result.output
    assert "[llm] base_url = 'ftp://***@host/v1' is not" in result.output
    assert "0123456789abcdef" not in result.output and "pa55word" not in result.output
