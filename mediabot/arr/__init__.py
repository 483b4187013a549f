"""Sonarr and Radarr: the model's tools, the download webhooks and the notices
they become, and the requests members made.
"""
