"""Helpers the test modules share, one module per job:

- ``household``: The household the tests text as: its people's numbers, its titles' ids, the
  public URL and the secrets its webhooks and Twilio account are configured with.
- ``clock``: Time in tests: a settable clock (tests move time instead of sleeping) and the
  received-at stamp the model reads before a person's text.
- ``config_files``: config.toml and raw config tables: writing a config file from tables, a
  valid Config on the fakes, the least a daemon's config holds and its problems.
- ``texting``: Texting the /sms webhook in process as Twilio does, on SMS and WhatsApp, signed;
  WhatsApp's 24-hour window passing; Twilio's delivery reports.
- ``carriers``: The carriers a test's sender delivers through (Twilio for both channels).
- ``sent``: What reached people: the messages the fake Twilio accepted or refused, and the
  outbox's last text to a number.
- ``asking``: A household on the fake arrs asking for things: the model scripted to call a tool,
  what the tool answered, a request recorded and its download finished.
- ``languages``: A household's own language: German texts the daemon sends, word for word.
- ``posters``: Posters: public artwork URLs, the choice text that carries them, and URLs that
  must never leave the house.
- ``arr_hooks``: Sonarr's and Radarr's webhooks: their payloads as the arrs send them, Basic
  auth, and posting them to the daemon.
- ``worker``: The worker with a recording engine: turns recorded and held open, texts queued in
  the inbox, a database whose turns cannot write.
- ``messages``: OpenAI-shaped messages as stored and as sent, and llama-server's /props.
- ``prompts``: Reading a prompt the model received: its conversation, the person's part, the
  tools it was offered and their results.
- ``serve``: `mediabot serve` as a child process, with its config file and database.
- ``seerr_house``: A household on the fake Seerr: its admins and member linked to their Seerr
  users, the real client and approvals on the fake, and the texts they queue.
- ``check``: `mediabot check` on the fakes: a healthy config with overrides, its secrets, and
  the lines it prints (the servers fixture of tests/ops/conftest.py).

Test modules import from the module that holds what they need (``from tests.support.texting
import text``), never from each other nor from a conftest.py, so a test module can be renamed,
split or deleted without breaking another one. Fixtures built on these live in the conftest.py
files (tests/, and a package's own where only it uses them). This file holds no helper.
"""
