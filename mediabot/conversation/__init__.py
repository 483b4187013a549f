"""One person's conversation: the engine that routes a text, the model turn,
confirmations, household rules and posters.
"""
