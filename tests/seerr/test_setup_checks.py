"""`mediabot check` with [seerr]: Seerr's version, the key, each member's link, the
[requests] rules Seerr replaces; and no Seerr line at all without [seerr]."""

import os

from click.testing import CliRunner

from mediabot.cli import main
from tests.fakes.seerr_model import Permission
from tests.support.config_files import dead_servers, write_config
from tests.support.household import ADMIN, MEMBER

THIRD = "+15551230009"


def run_check(tmp_path, *, seerr=None, key=None, requests=None, users=None):
    sections = {"server": {"public_url": "https://sms.smith-family.net"},
                "database": {"path": tmp_path / "m.db"}, **dead_servers()}
    if seerr is not None:
        sections["seerr"] = {"url": seerr.url, "api_key": key or seerr.api_key,
                             "timeout_seconds": 3}
    if requests:
        sections["requests"] = requests
    sections["users"] = users or [{"phone": ADMIN, "name": "Alex", "role": "admin"}]
    path = write_config(tmp_path, **sections)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDIABOT_")}
    result = CliRunner().invoke(main, ["check", "--config", str(path)], env=env)
    assert "Traceback" not in result.output
    return [line for line in result.output.splitlines()
            if line.split(":")[0].split()[-1:] in (["seerr"], ["requests"])]


def test_without_seerr_check_says_nothing_about_it(tmp_path):
    lines = run_check(tmp_path)
    assert not [line for line in lines if "seerr" in line.lower()]


def test_check_names_the_version_and_every_members_link(tmp_path, seerr):
    seerr.add_user("alex", permissions=Permission.ADMIN)
    seerr.add_user("sam", email="sam@example.com", permissions=Permission.REQUEST)
    seerr.add_user("viewer", permissions=0)
    lines = run_check(tmp_path, seerr=seerr, requests={"approval": "members",
                                                       "movies_per_week": 2},
                      users=[{"phone": ADMIN, "name": "Alex", "role": "admin",
                              "seerr_user": "alex"},
                             {"phone": MEMBER, "name": "Sam", "seerr_user": "SAM@example.com"},
                             {"phone": THIRD, "name": "Kim"},
                             {"phone": "+15551230010", "name": "Lou", "seerr_user": "lou"},
                             {"phone": "+15551230011", "name": "Vi", "seerr_user": "viewer"}])
    base = seerr.url + "/api/v1"
    assert lines == [
        f"ok   seerr: Seerr 3.1.0 at {base}, key accepted (it acts as owner; requests are "
        "filed as each member)",
        "ok   seerr: linked: Alex = alex (id 2), Sam = sam (id 3), Vi = viewer (id 4)",
        f"warn seerr: Kim ({THIRD}) has no Seerr link, so their requests cannot be filed — set "
        "seerr_user in their [[users]] entry (a Seerr user id, email or username)",
        "FAIL seerr: Lou (+15551230010): seerr_user = 'lou' matches no Seerr user — use their "
        "Seerr id, email or username (Seerr's Users page lists them)",
        "warn seerr: Vi (+15551230011): Seerr user viewer may not request anything — give "
        "them Request in Seerr's Users > Edit > Permissions",
        "warn requests: [requests] approval = \"members\", movies_per_week = 2 does not apply "
        "to requests filed in Seerr: Seerr's own approvals and quotas decide — set them per "
        "user in Seerr, and remove them here",
        lines[-1],
    ]
    assert lines[-1].startswith("ok   requests: members' adds wait")


def test_a_wrong_key_and_a_seerr_that_is_down(tmp_path, seerr):
    lines = run_check(tmp_path, seerr=seerr, key="not-the-key-123")
    assert lines[0] == ("FAIL seerr: Seerr rejected [seerr] api_key — copy the API Key from "
                        "Seerr's Settings > General into it (or MEDIABOT_SEERR_API_KEY)")
    assert "not-the-key-123" not in "\n".join(lines)
    seerr.down()
    lines = run_check(tmp_path, seerr=seerr)
    assert lines[0].startswith(f"FAIL seerr: cannot reach Seerr at {seerr.url}/api/v1")


def test_two_members_on_one_seerr_user_and_a_member_on_a_seerr_admin_are_warned(tmp_path,
                                                                               seerr):
    """Bob linked by id to Alice's Seerr user: every request of his would be filed, approved
    and told as hers. Kim, a member here, linked to a Seerr admin: Seerr approves all she
    asks and she may decide anyone's. Both are said, with the fix."""
    seerr.add_user("alice", email="alice@example.com", permissions=Permission.REQUEST)
    seerr.add_user("kim", permissions=Permission.ADMIN)
    lines = run_check(tmp_path, seerr=seerr, users=[
        {"phone": ADMIN, "name": "Alice", "role": "admin", "seerr_user": "alice@example.com"},
        {"phone": MEMBER, "name": "Bob", "seerr_user": "2"},
        {"phone": THIRD, "name": "Kim", "seerr_user": "kim"}])
    assert (f"warn seerr: Kim ({THIRD}) is a member here, but Seerr user kim is a Seerr "
            "admin, so Seerr approves every request they text and they may decide anyone's "
            "in Seerr — link them to their own non-admin Seerr user, or make them role = "
            "\"admin\" here") in lines
    assert (f"warn seerr: Alice ({ADMIN}) and Bob ({MEMBER}) resolve to the same Seerr user "
            "(id 2), so Seerr takes their requests as one person's (the first one's notices, "
            "approvals and quota) — give each their own Seerr user: seerr_user = that user's "
            "id, email or Plex/Jellyfin username") in lines


def test_a_display_name_set_to_a_members_link_takes_nobody_for_them(tmp_path, seerr):
    """Theo set his Seerr Display Name to Sam's link: check links Sam to Sam's own user,
    not "several users"."""
    sam = seerr.add_user("sam", email="sam@example.com", permissions=Permission.REQUEST)
    theo = seerr.add_user("theo", permissions=Permission.REQUEST)
    seerr.set_display_name(theo, "sam")
    lines = run_check(tmp_path, seerr=seerr, users=[
        {"phone": ADMIN, "name": "Alex", "role": "admin", "seerr_user": "theo"},
        {"phone": MEMBER, "name": "Sam", "seerr_user": "sam"}])
    assert f"ok   seerr: linked: Alex = theo (id {theo}), Sam = sam (id {sam})" in lines
    assert not [line for line in lines if line.startswith("FAIL")]
