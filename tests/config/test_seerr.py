"""[seerr] and each member's link to a Seerr user: read, checked, stored, added by command."""

import os

import pytest
from click.testing import CliRunner

from mediabot.app import build_services, open_storage
from mediabot.cli import main
from mediabot.config import ConfigError, load_config, parse_config
from mediabot.seerr.api import SeerrClient
from mediabot.store import db
from tests.support.config_files import write_config
from tests.support.household import ADMIN, MEMBER

BASE = {"llm": {"base_url": "http://127.0.0.1:9/v1"}}


def test_without_seerr_nothing_is_built(tmp_path):
    config = parse_config(BASE, environ={})
    assert config.seerr is None
    services = build_services(config)
    assert services.approvals.seerr is None and services.link_for is None


def test_seerr_section_builds_one_client():
    config = parse_config({**BASE, "seerr": {"url": "http://nas:5055", "api_key": "sk-seerr-1"},
                           "users": [{"phone": MEMBER, "seerr_user": 7}]}, environ={})
    assert config.seerr.timeout_seconds == 10
    assert config.users[0].seerr_user == "7"
    services = build_services(config)
    client = services.approvals.seerr.client
    assert isinstance(client, SeerrClient) and services.link_for.client is client
    assert client.base == "http://nas:5055/api/v1"
    assert "sk-seerr-1" not in repr(config) + repr(client)


def test_api_key_from_the_environment_and_a_file(tmp_path):
    secret = tmp_path / "seerr_key"
    secret.write_text("from-a-file-123\n")
    raw = {**BASE, "seerr": {"url": "http://nas:5055"}}
    by_env = parse_config(raw, environ={"MEDIABOT_SEERR_API_KEY": "from-env-123"})
    by_file = parse_config(raw, environ={"MEDIABOT_SEERR_API_KEY_FILE": str(secret)})
    assert (by_env.seerr.api_key, by_file.seerr.api_key) == ("from-env-123", "from-a-file-123")


def test_problems_name_the_key_and_never_show_the_secret():
    with pytest.raises(ConfigError) as raised:
        parse_config({**BASE, "seerr": {"url": "nas:5055", "api_key": 12345678},
                      "users": [{"phone": MEMBER, "seerr_user": ["sam"]}]}, environ={})
    text = str(raised.value)
    assert "[seerr] url = 'nas:5055' is not an http(s) URL" in text
    assert "[seerr] api_key = (hidden) must be a string" in text
    assert "seerr_user = ['sam'] must be a Seerr user id, email or username" in text
    assert "12345678" not in text
    with pytest.raises(ConfigError, match=r"\[seerr\] api_key is required.*MEDIABOT_SEERR_API_KEY"):
        parse_config({**BASE, "seerr": {"url": "http://nas:5055"}}, environ={})


def test_config_link_is_stored_on_the_user(tmp_path):
    config = parse_config({**BASE, "database": {"path": str(tmp_path / "m.db")},
                           "users": [{"phone": ADMIN, "role": "admin"},
                                     {"phone": MEMBER, "seerr_user": "sam@example.com"}]},
                          environ={})
    open_storage(config)
    try:
        links = {u.phone: u.seerr_user for u in db.User.select()}
        assert links == {ADMIN: None, MEMBER: "sam@example.com"}
    finally:
        db.database.close()


def test_users_add_with_a_seerr_user(tmp_path):
    path = write_config(tmp_path, llm={"base_url": "http://127.0.0.1:9/v1"},
                        database={"path": str(tmp_path / "m.db")})
    result = CliRunner().invoke(main, ["users", "add", "+15552223333", "--name", "Bo",
                                       "--seerr-user", "bo", "--config", str(path)],
                                env={k: v for k, v in os.environ.items()
                                     if not k.startswith("MEDIABOT_")})
    assert result.exit_code == 0, result.output
    assert "added +15552223333 (Bo) as member, Seerr user 'bo'" in result.output
    load_config(path)
    try:
        assert db.User.get(db.User.phone == "+15552223333").seerr_user == "bo"
    finally:
        db.database.close()
