"""Answering texts: the workers that take each person's queued texts out of the inbox and
answer them, one turn at a time per person.

Why a package apart from ``mailbox``: the mailbox holds the texts (the inbox the webhook
fills, the outbox and its delivery through Twilio) and sits below the conversation, which
reads it (a question counts as asked only once Twilio accepted its text). Answering sits
above the conversation: it reads a text out of the inbox, hands it to the engine and puts
the reply in the outbox, so it is the one package that uses both. ``worker`` owns the
threads, the per-person slots and shutdown; ``answer`` what one pass over a person's texts
does (``TextsPass``); ``faults`` what a turn does when storage fails under it.
"""
