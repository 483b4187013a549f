"""A simulated media server on loopback: Sonarr (v3/v4) and Radarr speaking the v3 API that
arrapi uses, a Twilio REST stand-in, an Android phone running SMS Gateway
(``phone``), and the loopback WSGI runner they share.

One simulation serves both ``mediabot demo``/``mediabot eval`` and the test suite, so what a
newcomer tries is what the tests prove. Nothing here runs at import: servers start only when
a caller starts them.
"""
