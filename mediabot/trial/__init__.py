"""Trying mediabot without a phone or a media server: demo, eval (``launch.py`` starts
them for the command line), the conversation typed in a terminal (``terminal.py``, also
``mediabot chat``'s) and the loopback simulation of Sonarr, Radarr and Twilio.
"""
