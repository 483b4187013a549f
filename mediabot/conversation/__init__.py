"""One person's conversation: the engine that routes a text (``engine``), the model turn
(``model_turn``) and the services it runs against (``services``), the stored history
(``history``), confirmations, household rules, posters, forgetting, rolling summaries
(``summarizer``) and the token calibration; ``prompt/`` builds what the model reads.
"""
