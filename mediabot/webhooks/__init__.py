"""The HTTP edge: the Flask app (``web``: Twilio's /sms and /sms/status, /healthz),
Sonarr/Radarr's /hooks/<service> (``downloads``) and Seerr's /hooks/seerr
(``seerr_hook``), sharing one authentication helper (``auth``)."""
