"""Texts in and out: the intake that stores each webhook, the worker that answers
them, the faults a turn can meet and the outbox sender.
"""
