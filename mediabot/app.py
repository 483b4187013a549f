"""Wiring: build the clients, the engine and the daemon's parts from a Config, once."""

import datetime as dt
import logging

from flask import Flask

from mediabot.approvals.front import Approvals, next_number, still_waiting
from mediabot.approvals.house_rules import HouseRules, Notify
from mediabot.approvals.seerr_requests import SeerrApprovals
from mediabot.arr import notices
from mediabot.arr.tools import ArrClient
from mediabot.carrier.base import Carriers
from mediabot.carrier.configured import gateway_settings, twilio_in_use
from mediabot.carrier.phone import PhoneCarrier
from mediabot.carrier.sms_gateway.client import GatewayClient
from mediabot.carrier.sms_gateway.settings import Mode
from mediabot.carrier.twilio.carrier import TwilioCarrier
from mediabot.config import Config
from mediabot.conversation.engine import Engine
from mediabot.conversation.services import Services
from mediabot.conversation.summarizer import Summarizer
from mediabot.mailbox.inbox import Intake
from mediabot.model.chat import ChatModel
from mediabot.seerr.api import SeerrClient
from mediabot.seerr.member_link import MemberLinks
from mediabot.seerr.notifications import SeerrNotices
from mediabot.store import db, migrations
from mediabot.store.users import ensure_config_users
from mediabot.text.localtime import Clock
from mediabot.webhooks.seerr_hook import SeerrHook
from mediabot.webhooks.sms_gateway import GatewayHook
from mediabot.webhooks.web import Worker, status_url

log = logging.getLogger(__name__)


def open_storage(config: Config) -> None:
    """Open and migrate the database, and write the config's [[users]] into it."""
    migrations.open_database(config.database.path)
    ensure_config_users(config.users)


def build_services(config: Config, clock: Clock = db.utcnow,
                   notify: Notify | None = None) -> Services:
    """Clients are built here, not at import; the model's SDK client and the arr clients
    are built lazily on first use, and Seerr's does no I/O until its first call."""
    model = ChatModel.lazy(config.llm)
    sonarr = ArrClient("sonarr", config.sonarr) if config.sonarr else None
    radarr = ArrClient("radarr", config.radarr) if config.radarr else None
    summarizer = Summarizer(model, config.history) if config.history.summaries else None
    rules = HouseRules(config.requests, notify, config.server.zone, config.sms.language,
                       numbers=next_number)
    if config.seerr is None:
        return Services(config=config, model=model, sonarr=sonarr, radarr=radarr, clock=clock,
                        summarizer=summarizer, approvals=Approvals(rules))
    seerr = SeerrClient(config.seerr.url, config.seerr.api_key,
                        timeout=config.seerr.timeout_seconds)
    approvals = Approvals(rules, SeerrApprovals(seerr, notify, config.sms.language,
                                                numbers=next_number))
    return Services(config=config, model=model, sonarr=sonarr, radarr=radarr, clock=clock,
                    summarizer=summarizer, approvals=approvals,
                    link_for=MemberLinks(seerr, rules))


def build_engine(config: Config, clock: Clock = db.utcnow,
                 notify: Notify | None = None) -> Engine:
    """``notify(user, text)`` texts someone other than the sender (admins asked to approve,
    a member told the answer); without it those texts are not sent."""
    return Engine(build_services(config, clock, notify))


def held_text_stands(kind: db.TextKind, subject: int, now: dt.datetime) -> bool:
    """For the sender (``mailbox.held.Stands``): does ``subject``, what a held text of
    ``kind`` is about, still stand? An approval request while its request waits for an
    answer; a download notice while its request is kept. The mailbox sits below both, so
    the daemon hands it this."""
    match kind:
        case db.TextKind.APPROVAL | db.TextKind.SEERR_APPROVAL:
            return still_waiting(kind, subject, now)
        case db.TextKind.READY:
            return notices.still_wanted(subject)
    return True


class _NoRoutes:
    def init_app(self, app: Flask) -> None:
        """A route not served: /hooks/seerr without Seerr, /sms/gateway without the phone's
        cloud or private mode."""


def seerr_hook(services: Services, clock: Clock = db.utcnow) -> SeerrHook | _NoRoutes:
    """``/hooks/seerr`` when Seerr is connected: its notifications become texts."""
    config, approvals = services.config, services.approvals.seerr
    if approvals is None or config.seerr is None:
        return _NoRoutes()
    notices = SeerrNotices(approvals.client, approvals,
                           link_to_library=config.seerr.link_to_library, clock=clock)
    return SeerrHook(config.notifications.webhook_secret, notices)


def gateway_hook(config: Config, worker: Worker, intake: Intake,
                 clock: Clock = db.utcnow) -> GatewayHook | _NoRoutes:
    """``/sms/gateway`` when the phone is reached through the cloud or a private server,
    whose webhooks the phone posts there; the Local mode reads the phone's inbox instead."""
    settings = gateway_settings(config)
    if settings is None or settings.mode is Mode.LOCAL:
        return _NoRoutes()
    return GatewayHook(config, settings.signing_key, worker=worker, intake=intake, clock=clock)


def build_carriers(config: Config) -> tuple[Carriers, GatewayClient | None]:
    """The carrier of each channel, and the phone's client when the phone carries SMS:
    with ``[sms_gateway]`` SMS goes through the phone and WhatsApp stays on Twilio (when
    ``[twilio]`` is written); without it Twilio carries both. Nothing is called here."""
    twilio = (TwilioCarrier.for_config(config.twilio, _status_callback(config))
              if twilio_in_use(config) else None)
    settings = gateway_settings(config)
    if settings is None:
        return Carriers(sms=twilio, whatsapp=twilio), None
    client = GatewayClient(settings)
    return Carriers(sms=PhoneCarrier(client), whatsapp=twilio), client


def _status_callback(config: Config) -> str:
    """Every text asks Twilio to report its delivery to /sms/status: no console setting."""
    public = config.server.public_url
    return status_url(public) if public else ""
