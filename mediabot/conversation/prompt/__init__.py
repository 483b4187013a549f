"""What the model reads: stored history, the window and its shape, the
message rules the API enforces, the system prompt and rolling summaries.
"""
