"""Sonarr and Radarr: the model's tools (``tools/``), the download webhooks (``hooks``,
``events``) and the notices they become (``notices``), the requests members made
(``requests``) and how often a title may be searched again (``searches``).
"""
