"""What the model reads, built purely from data: the builder (``build``), the window and
the shape it cuts stored history into, the message rules the API enforces and the system
prompt. Nothing here touches the database or calls the model: the stored history is
``conversation.history``, rolling summaries ``conversation.summarizer``.
"""
