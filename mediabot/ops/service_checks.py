"""The checks of ``mediabot check`` that ask Sonarr, Radarr and Twilio: reachable, the key
or credentials accepted, and set up as mediabot needs them (root folder, quality profile,
the sender numbers, WhatsApp's 24-hour window).

Each server is asked with the timeout of its own config section and no retries.
"""

from mediabot.config import Config, TwilioConfig
from mediabot.text.check_report import FAIL, OK, WARN, Line


def check_arr(kind: str, config: Config) -> list[Line]:
    """ArrClient.check's lines (reachable, key, root folder, profile), or why it is off."""
    from mediabot.arr.tools import ArrClient

    arr = getattr(config, kind)
    if arr is None:
        tools = "series" if kind == "sonarr" else "movie"
        return [Line(WARN, kind, f"no [{kind}] section, so the {tools} tools are off — add "
                                 f"[{kind}] url and api_key to turn them on")]
    return [Line(OK if ok else FAIL, kind, text) for ok, text in ArrClient(kind, arr).check()]


def check_twilio_line(config: Config) -> Line:
    """``sender.check_twilio`` (credentials, from_number owned) as a Line."""
    from mediabot.carrier.twilio.client import build_twilio_client, check_twilio

    ok, text = check_twilio(build_twilio_client(config.twilio), config.twilio)
    text = text.removeprefix("twilio: ")
    if ok:
        return Line(OK, "twilio", "credentials accepted " + text.removeprefix("ok ").strip())
    if text.startswith("network:"):
        host = config.twilio.api_base_url or "https://api.twilio.com"
        text += f" — can this host reach {host}? check [twilio] api_base_url and the network"
    return Line(FAIL, "twilio", text)


def check_whatsapp(config: Config) -> list[Line]:
    """The WhatsApp sender (looked up at Twilio) and what happens outside the 24-hour
    window; nothing when ``[twilio] whatsapp_from`` is not set."""
    from mediabot.carrier.twilio.client import build_twilio_client
    from mediabot.carrier.twilio.whatsapp_sender import check_whatsapp_sender

    if not config.twilio.whatsapp_from:
        return []
    ok, text = check_whatsapp_sender(build_twilio_client(config.twilio), config.twilio)
    return [Line(OK if ok else FAIL, "whatsapp", text), whatsapp_window_line(config.twilio)]


def whatsapp_window_line(twilio: TwilioConfig) -> Line:
    """How a notice and an approval request go outside WhatsApp's 24-hour window; a warn
    when one of them can only wait (no template for it and no SMS to fall back on)."""
    from mediabot.mailbox import channels
    from mediabot.store.db import TextKind

    mode, sms = twilio.whatsapp_outside_window, channels.sms_sender(twilio)
    if mode == "wait":
        return Line(OK, "whatsapp", "outside the 24-hour window, notices and approval requests "
                                    "wait for the person's next WhatsApp message "
                                    "(whatsapp_outside_window = \"wait\"; dropped after 7 days)")
    ways = {kind: (f"go as template {channels.template_for(kind, twilio)}"
                   if mode == "template" and channels.template_for(kind, twilio)
                   else f"go by SMS from {sms}" if sms else "")
            for kind in (TextKind.READY, TextKind.APPROVAL)}
    said = "; ".join(f"{name} {ways[kind] or 'wait for the next WhatsApp message'}" for
                     kind, name in ((TextKind.READY, "download notices"),
                                    (TextKind.APPROVAL, "approval requests")))
    stuck = [key for kind, key in ((TextKind.READY, "whatsapp_ready_template"),
                                   (TextKind.APPROVAL, "whatsapp_approval_template"))
             if not ways[kind]]
    if stuck:
        return Line(WARN, "whatsapp", f"outside the 24-hour window, {said} — set [twilio] "
                                      f"{' and '.join(stuck)} (an approved HX... Content SID) "
                                      "or an SMS from_number to send them")
    return Line(OK, "whatsapp", f"outside the 24-hour window, {said}")
