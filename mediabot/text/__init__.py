"""Text rules shared by every layer: SMS encoding and segments, keywords, phone
numbers, local time and masking. Pure functions; nothing here does I/O.
"""
