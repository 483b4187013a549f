"""What mediabot answers a person: the text, and the posters that go with it.

Made by the engine (a keyword's answer, a confirmation's, the model's), carried by the
worker's pass to the sender, which sends the posters by MMS (``[sms] posters``).
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Reply:
    """What mediabot answers: the text, and the media URLs (posters) to send with it."""

    text: str
    media: tuple[str, ...] = ()
