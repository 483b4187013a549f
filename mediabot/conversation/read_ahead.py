"""The person's next prompt, read by the server ahead, once their reply has gone.

A reply in a tool's own words (the server read only up to the call) or a window that slid
leaves the next text's prompt beginning with something the server has not read, and the
person would wait for it to read all of that with their next text. So, off their wait
(``Engine.after_turn``), the prompt their next text would get is built as that turn will
build it (``model_turn.turn_prompt``: the same frame, the history as it is now, the same
window) with ``STAND_IN`` for the text not yet sent, and handed to
``ChatModel.read_ahead``, which sends it only where and when it pays (docs/models.md,
"Reading ahead"). The stand-in is one user message, so the message cap cuts exactly where
the next text's will; it is never stored, logged or remembered. Its length is the shortest a
text is (``STAND_IN``): the window's character budgets may slide for a longer text where
they did not for it (that text then reads its prompt as it would have without the
read-ahead), but never slide for it where they would not for the real text, which would
leave the server holding a window the text does not get (a longer stand-in did so for a
"thanks!" in the bench's evening: 2,464 characters read again on the person's wait).

Skipped here besides: a person with no name yet (their next text is onboarding's) and a
removal waiting for its Y or N (the likeliest next text is answered without the model).
"""

import logging

from mediabot.conversation import confirmations as confirm
from mediabot.conversation import history
from mediabot.conversation.model_turn import turn_prompt
from mediabot.conversation.services import Services, build_frame
from mediabot.mailbox import inbox
from mediabot.model import calibration
from mediabot.model.read_ahead import ReadAhead
from mediabot.store.people import Person

log = logging.getLogger(__name__)

# What the next text is taken to be while it has not come: as short as a text is
STAND_IN = "ok"


def read_next_prompt(services: Services, person: Person) -> ReadAhead:
    """Have the server read ``person``'s next prompt now, when that pays; what it did. Logs
    one line when a request went (or failed); raises only what storage raises."""
    model = services.model
    if not model.reads_ahead():
        return ReadAhead(skipped="not here")
    now = services.clock()
    if not person.name or confirm.active_pending(person.id, now):
        return ReadAhead(skipped="the next text is not the model's")
    config = services.config
    frame = build_frame(services, person)
    rows = history.recent_history(person.id, config.history.fetch_limit, coming=1)
    stand_in = {"role": "user", "content": STAND_IN, "_at": now}
    prompt = turn_prompt(config, person, frame, [*rows, stand_in],
                         history.tools_before(person.id, rows),
                         calibration.ratio_for(config.llm.model))
    done = model.read_ahead(prompt.messages, frame.schemas, person=person.place,
                            waiting=lambda: bool(inbox.users_with_unanswered()))
    if done.failed:
        log.info("read ahead user=%s failed (%s); nothing kept, nothing retried", person.id,
                 done.failed)
    elif done.read:
        log.info("read ahead user=%s prompt_tokens=%s cached_tokens=%s duration_ms=%d",
                 person.id, done.prompt_tokens, done.cached_tokens, done.duration_ms)
    else:
        log.debug("read ahead user=%s skipped: %s", person.id, done.skipped)
    return done
