"""Trying mediabot without a phone or a media server: demo, eval and the
loopback simulation of Sonarr, Radarr and Twilio.
"""
