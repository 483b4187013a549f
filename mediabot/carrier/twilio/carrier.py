"""Twilio as one ``carrier.base.Carrier``: one text is one ``messages.create``.

SMS go from ``[twilio] from_number`` (or the messaging service), WhatsApp from
``whatsapp_from``; a WhatsApp template goes as ``ContentSid`` with the text as its one
variable. Every message asks Twilio to post its delivery reports to ``status_callback``
(``/sms/status``) when one is given. Twilio's network answers STOP and START itself
(Advanced Opt-Out), so mediabot does not confirm them on Twilio's SMS.
"""

import json
from typing import Any

from twilio.rest import Client

from mediabot.carrier.base import Abilities, Outcome, OutcomeKind, OutgoingText
from mediabot.carrier.twilio.client import build_twilio_client, classify
from mediabot.config import TwilioConfig
from mediabot.text.phones import SMS, WHATSAPP, Channel, channel_address, split_channel


class TwilioCarrier:
    name = "twilio"

    def __init__(self, client: Client, config: TwilioConfig, status_callback: str = ""):
        self.client, self.config, self.status_callback = client, config, status_callback
        channels = {SMS} if config.from_number or config.messaging_service_sid else set()
        if config.whatsapp_from:
            channels.add(WHATSAPP)
        self.abilities = Abilities(frozenset(channels), media=True, answers_opt_out=True)

    @classmethod
    def for_config(cls, config: TwilioConfig, status_callback: str = "") -> "TwilioCarrier":
        return cls(build_twilio_client(config), config, status_callback)

    def send(self, text: OutgoingText) -> Outcome:
        try:
            report = {"status_callback": self.status_callback} if self.status_callback else {}
            message = self.client.messages.create(**message_fields(text, self.config), **report)
        except Exception as exc:  # noqa: BLE001 - every failure becomes an outcome
            return classify(exc, self.config.auth_token, text.body)
        return Outcome(OutcomeKind.SENT, sid=message.sid, state=message.status)


def message_fields(text: OutgoingText, config: TwilioConfig) -> dict[str, Any]:
    """``messages.create`` arguments for one text (without the status callback)."""
    fields: dict[str, Any] = {"to": channel_address(text.channel, text.to)}
    fields.update(_sender(text.channel, config))
    if text.template:
        # Twilio: with a ContentSid, Body and MediaUrl must be left out.
        return {**fields, "content_sid": text.template,
                "content_variables": json.dumps({"1": text.body})}
    fields["body"] = text.body
    if text.media:   # WhatsApp carries one media item per message
        fields["media_url"] = list(text.media[:1] if text.channel == WHATSAPP else text.media)
    return fields


def _sender(channel: Channel, config: TwilioConfig) -> dict[str, str]:
    if channel == WHATSAPP:
        sender = config.whatsapp_from
        if sender.startswith("MG"):
            return {"messaging_service_sid": sender}
        return {"from_": channel_address(WHATSAPP, split_channel(sender)[1])}
    if config.messaging_service_sid:
        return {"messaging_service_sid": config.messaging_service_sid}
    return {"from_": config.from_number}
