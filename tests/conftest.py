"""Shared fixtures: a fresh database per test, fake servers shared per module (reset per test).
A package's own fixtures are in its conftest.py (tests/arr, mailbox, ops, store; tests/e2e
marks its tests e2e). Plain helpers (texting the webhook, payloads, a config.toml writer) are
in the modules of tests/support/, one per job."""

import datetime as dt
import os
import shutil
import signal
from pathlib import Path

import pytest
from hypothesis import settings

from mediabot.store import db, migrations
from mediabot.trial.sim.loopback import LoopbackServer
from tests.fakes.openai import FakeOpenAI
from tests.fakes.seerr import FakeSeerr
from tests.support.clock import Clock
from tests.support.config_files import make_config
from tests.support.household import ADMIN, ADMIN2, MEMBER, SANDBOX, SECRET
from tests.support.serve import Serve


def pytest_ignore_collect(collection_path, config):
    """The inner loop (``-m "not e2e"``) does not import tests/e2e at all: every test there is
    marked e2e by its conftest.py, so collecting the folder only to deselect it costs a
    second and a half of imports."""
    if config.option.markexpr.strip() == "not e2e" and collection_path.name == "e2e" \
            and collection_path.parent == Path(__file__).parent:
        return True
    return None


def pytest_configure(config):
    """The property tests' profiles (docs/testing.md, "Property tests"): CI draws the same
    examples on every run (``derandomize``), so a CI result never depends on the draw; a
    developer's run draws fresh ones (kept in ``.hypothesis/`` to replay a failure); ``deep``
    draws ten times as many, for the developers' own hunt. ``HYPOTHESIS_PROFILE`` picks one."""
    settings.register_profile("ci", max_examples=300, deadline=None, derandomize=True,
                              database=None, print_blob=True)
    settings.register_profile("dev", max_examples=300, deadline=None, print_blob=True)
    settings.register_profile("deep", max_examples=3000, deadline=None, print_blob=True)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI")
                                                                   else "dev"))


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture(scope="session")
def migrated(tmp_path_factory):
    """A database file migrated once for the session. Each test's database starts as a copy
    of it, so a test does not pay for twenty migrations' commits (~50 ms on a busy disk);
    tests/store migrates fresh files itself."""
    path = tmp_path_factory.mktemp("migrated") / "mediabot.db"
    migrations.open_database(str(path))
    db.database.close()
    return path


def fresh_copy(migrated, path):
    """``path`` as a freshly migrated database (a copy of ``migrated``) unless it exists."""
    if not os.path.exists(path):
        shutil.copyfile(migrated, path)
    return str(path)


@pytest.fixture
def database(tmp_path, migrated):
    migrations.open_database(fresh_copy(migrated, tmp_path / "mediabot.db"))
    yield db.database
    db.database.close()


@pytest.fixture(scope="module")
def openai_server():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def fake_llm(openai_server):
    openai_server.reset()
    return openai_server


@pytest.fixture(scope="module")
def twilio_server():
    from mediabot.trial.sim.loopback import LoopbackServer
    from mediabot.trial.sim.twilio import FakeTwilio

    fake = FakeTwilio()
    server = LoopbackServer(fake).start()
    fake.url = server.url
    yield fake
    server.stop()


@pytest.fixture
def fake_twilio(twilio_server):
    twilio_server.reset()
    return twilio_server


@pytest.fixture
def daemon_for(fake_llm, fake_twilio, tmp_path, clock, migrated):
    """Build in-process Daemons (not serving a port) on the fakes; stopped after the test."""
    from mediabot.answering.faults import RetryPolicy
    from mediabot.daemon import Daemon
    from mediabot.mailbox.delivery import Backoff

    made = []

    def build(*, burst_seconds=0, backoff=Backoff(attempts=2, base_seconds=0.01),
              retry=RetryPolicy(attempts=4, base_seconds=0.05, max_seconds=0.2), **sections):
        config = make_config(llm_url=fake_llm.url, twilio_url=fake_twilio.url,
                             db_path=fresh_copy(migrated, tmp_path / "m.db"), **sections)
        daemon = Daemon(config, clock=clock, backoff=backoff, burst_seconds=burst_seconds,
                        retry=retry)
        made.append(daemon)
        return daemon
    yield build
    for daemon in made:
        daemon.worker.shutdown(5)
    db.database.close()


@pytest.fixture
def stack(clock):
    """Fake Sonarr and Radarr on loopback, seeded with a small household library around
    the tests' clock, so 'upcoming' and 'now' agree on the engine's side and the servers'."""
    from tests.fakes.arr_stack import ArrStack

    stack = ArrStack(now=clock.now.replace(tzinfo=dt.UTC))
    yield stack
    stack.close()


@pytest.fixture
def engine_for(fake_llm, tmp_path, clock, request, migrated):
    """Build Engines on a fresh database; ``arr=True`` also points them at the fake arrs."""
    from mediabot.app import build_services, open_storage
    from mediabot.conversation.engine import Engine
    from mediabot.trial.sim.arr import API_KEY

    def build(*, arr=False, **sections):
        urls = {}
        if arr:
            stack = request.getfixturevalue("stack")
            urls = dict(sonarr_url=stack.servers["sonarr"].url,
                        radarr_url=stack.servers["radarr"].url,
                        sonarr={"api_key": API_KEY}, radarr={"api_key": API_KEY})
        config = make_config(llm_url=fake_llm.url, db_path=fresh_copy(migrated, tmp_path / "m.db"),
                             **urls, **sections)
        open_storage(config)
        return Engine(build_services(config, clock))
    yield build
    db.database.close()


@pytest.fixture
def alex(engine):
    """The configured admin's user id (tests define ``engine``)."""
    return db.User.get(phone=ADMIN).id


@pytest.fixture
def sam(engine):
    """The configured member's user id."""
    return db.User.get(phone=MEMBER).id


@pytest.fixture
def users(database):
    """Three bare users (ids) on a fresh database."""
    return [db.User.create(phone=f"+1555000000{i}").id for i in range(3)]


@pytest.fixture
def house(daemon_for, stack):
    """Build Daemons on the fake arrs with [requests] rules, and a second admin, Jo."""
    from mediabot.trial.sim.arr import API_KEY

    def build(*, sms=None, **requests):
        daemon = daemon_for(
            sonarr={"url": stack.servers["sonarr"].url, "api_key": API_KEY},
            radarr={"url": stack.servers["radarr"].url, "api_key": API_KEY},
            requests=requests, server={"timezone": "UTC"}, sms=sms or {})
        db.User.create(phone=ADMIN2, display_name="Jo", role="admin")
        return daemon
    return build


@pytest.fixture
def household(daemon_for, stack):
    """A daemon with a WhatsApp sender beside its SMS number, on the fake arrs; ``requests``
    adds [requests] rules (approval = "members") to its weekly movie quota of one."""
    def build(requests=None, **twilio):
        from mediabot.trial.sim.arr import API_KEY

        return daemon_for(
            sonarr={"url": stack.servers["sonarr"].url, "api_key": API_KEY},
            radarr={"url": stack.servers["radarr"].url, "api_key": API_KEY},
            requests={"movies_per_week": 1, **(requests or {})}, server={"timezone": "UTC"},
            notifications={"webhook_secret": SECRET},
            twilio={"whatsapp_from": SANDBOX, **twilio})
    return build


@pytest.fixture
def serve(tmp_path, fake_llm, fake_twilio):
    """Start `mediabot serve` child processes on the fakes; killed after the test."""
    made = []

    def start(extra="", env=None, launcher=None):
        s = Serve(tmp_path, fake_llm.url, fake_twilio.url, extra)
        s.env.update(env or {})
        s.launcher = launcher or s.launcher
        made.append(s)
        return s.start()
    yield start
    for s in made:
        s.stop(signal.SIGKILL)


@pytest.fixture
def loopback_daemon(daemon_for):
    """Build Daemons whose app answers on a loopback port (real HTTP), each with its ``url``
    (the daemon's own waitress is exercised through `mediabot serve` in tests/e2e)."""
    servers = []

    def start(secret=SECRET, **sections):
        daemon = daemon_for(notifications={"webhook_secret": secret}, **sections)
        servers.append(LoopbackServer(daemon.app).start())
        daemon.url = servers[-1].url
        return daemon
    yield start
    from tests.fakes.arr_stack import stop_all

    stop_all(servers)


@pytest.fixture
def seerr():
    """The fake Seerr on loopback; at the end, every call it took and every answer it gave
    must be one Seerr's own OpenAPI spec allows (``assert_clean``)."""
    with FakeSeerr() as fake:
        yield fake
        fake.assert_clean()


@pytest.fixture
def phone():
    """The fake Android phone (SMS Gateway for Android's Local server) on loopback; at the
    end, every call it took and every answer it gave must be one the app's OpenAPI file
    allows (``assert_clean``)."""
    from tests.fakes.sms_gateway import FakePhone

    with FakePhone() as fake:
        yield fake
        fake.assert_clean()
