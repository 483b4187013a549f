"""The per-process cache of root folders and profiles: kept for its ttl, refetched when
older, and a name it lacks is looked up once more on a fresh list. The clock is injected."""

from mediabot.arr.tools.metadata import Metadata


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Server:
    """Answers each fetch with the current list, counting how often it was asked."""

    def __init__(self, items):
        self.items = items
        self.fetches = 0

    def fetch(self):
        self.fetches += 1
        return list(self.items)


def by_name(wanted):
    return lambda items: next((i for i in items if i == wanted), None)


def test_a_list_is_fetched_once_within_its_ttl_and_again_after():
    clock, server = Clock(), Server(["HD-1080p", "Any"])
    cache = Metadata(ttl=60, clock=clock)
    assert cache.get("profiles", server.fetch) == ["HD-1080p", "Any"]
    clock.now += 59
    assert cache.get("profiles", server.fetch) == ["HD-1080p", "Any"]
    assert server.fetches == 1
    server.items = ["Ultra-HD"]
    clock.now += 1
    assert cache.get("profiles", server.fetch) == ["Ultra-HD"]
    assert server.fetches == 2


def test_a_name_found_in_the_cache_costs_no_request():
    server = Server(["HD-1080p", "Any"])
    cache = Metadata(ttl=60, clock=Clock())
    assert cache.pick("profiles", server.fetch, by_name("Any"))[0] == "Any"
    assert cache.pick("profiles", server.fetch, by_name("HD-1080p"))[0] == "HD-1080p"
    assert server.fetches == 1


def test_a_name_missing_from_the_cache_is_looked_up_once_more():
    """A profile the operator created a minute ago is found, not called unknown."""
    server = Server(["HD-1080p"])
    cache = Metadata(ttl=300, clock=Clock())
    cache.get("profiles", server.fetch)
    server.items = ["HD-1080p", "Kids"]
    assert cache.pick("profiles", server.fetch, by_name("Kids")) == ("Kids", ["HD-1080p", "Kids"])
    assert server.fetches == 2
    assert cache.pick("profiles", server.fetch, by_name("Kids"))[0] == "Kids"
    assert server.fetches == 2     # the fresh list is the cached one now


def test_a_name_that_really_is_unknown_costs_one_refetch_not_a_loop():
    server = Server(["HD-1080p"])
    cache = Metadata(ttl=300, clock=Clock())
    assert cache.pick("profiles", server.fetch, by_name("4K")) == (None, ["HD-1080p"])
    assert server.fetches == 1     # nothing was cached: the first fetch was already fresh
    assert cache.pick("profiles", server.fetch, by_name("4K")) == (None, ["HD-1080p"])
    assert server.fetches == 2


def test_lists_are_kept_apart_by_key():
    folders, profiles = Server(["/movies"]), Server(["Any"])
    cache = Metadata(clock=Clock())
    assert cache.get("root_folders", folders.fetch) == ["/movies"]
    assert cache.get("quality_profiles", profiles.fetch) == ["Any"]
    assert (folders.fetches, profiles.fetches) == (1, 1)
