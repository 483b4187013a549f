"""The household the tests text as: its people's numbers, its titles' ids, the public URL and the
secrets its webhooks and Twilio account are configured with."""

ADMIN = "+15551230001"                       # Alex, the configured admin
MEMBER = "+15551230002"                      # Sam, the configured member
PUBLIC = "https://sms.example.com"
# `mediabot serve` children get their own: serve refuses the example's placeholder
SERVE_PUBLIC = "https://sms.household.test"
URL = PUBLIC + "/sms"
ADMIN2 = "+15551230003"                      # the second admin the `house` fixture adds
THREE, HAIL_MARY_2 = 1170608, 653664          # Dune: Part Three; Dune Drifter (lookup only)
UK_OFFICE, PROPHECY = 78107, 397360
SANDBOX = "whatsapp:+14155238886"                # Twilio's shared WhatsApp sandbox sender
SECRET = "hook-secret"                        # [notifications] webhook_secret of the hook tests
SEVERANCE = 371980
READY_TEMPLATE = "HX" + "a" * 32
ACCOUNT_TOKEN = "tok-5f2b9c0e7d1a4b3c"
ACCOUNT_NUMBER = "+15550001111"
