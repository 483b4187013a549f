"""How often one title may be searched for again: ``[requests] search_again_hours``.

Indexers ban households that hammer them, so "look for it again" runs at most once per title
in that window, whoever asks and across restarts: the last search per (service, external id)
is a row in ``searches``, taken by one conditional upsert, so two members asking at the same
moment start one search between them.
"""

import datetime as dt
from dataclasses import dataclass, field

from mediabot.store import db
from mediabot.text.localtime import Clock, as_local


@dataclass
class SearchLimit:
    hours: int
    clock: Clock = db.utcnow   # naive UTC, as stored
    zone: dt.tzinfo = dt.UTC
    _taken: dict[tuple[str, int], dt.datetime] = field(default_factory=dict)

    def claim(self, service: str, external_id: int) -> dt.datetime | None:
        """Take this title's search: None when taken (search now), else the moment (in the
        household's zone) from which it may be searched again."""
        now = self.clock()
        cutoff = now - dt.timedelta(hours=self.hours)
        query = (db.Search.insert(service=service, external_id=external_id, searched_at=now)
                 .on_conflict(conflict_target=[db.Search.service, db.Search.external_id],
                              update={db.Search.searched_at: now},
                              where=(db.Search.searched_at <= cutoff)))
        if db.database.execute(query).rowcount == 1:
            self._taken[(service, external_id)] = now
            return None
        last = db.Search.get(db.Search.service == service,
                             db.Search.external_id == external_id).searched_at
        return as_local(last + dt.timedelta(hours=self.hours), self.zone)

    def release(self, service: str, external_id: int) -> None:
        """The search could not be started (Sonarr down): free the title again."""
        db.Search.delete().where(db.Search.service == service,
                                 db.Search.external_id == external_id,
                                 db.Search.searched_at == self._taken.pop(
                                     (service, external_id), None)).execute()
